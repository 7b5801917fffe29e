# RMS normalisation over the free axis, 128 rows per tile: y = x * rsqrt(mean(x^2) + eps).
#
# entry: rmsnorm_kernel
# inputs: x=float32[384,256]
# reference: x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
# tolerance: atol=1e-5 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def rmsnorm_kernel(x, eps=1e-6):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(F)[None, :]
    for t in nl.affine_range(rows // 128):
        tile = nl.load(x[t * 128 + ip, jf])
        ms = nl.mean(nl.square(tile), axis=1, keepdims=True)    # [128, 1]
        scale = nl.rsqrt(ms + eps)
        nl.store(out[t * 128 + ip, jf], value=nl.multiply(tile, scale))
    return out
