# A partition index made with nl.arange(128) without [:, None]: index tiles must be 2-D.
#
# entry: copy_kernel
# inputs: a=float32[128,32]
# expect-error: err_1d_arange_not_supported line 15
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)  # Mistake: a 1-D index tile: write nl.arange(128)[:, None]
    jf = nl.arange(32)[None, :]
    tile = nl.load(a[ip, jf])
    nl.store(out[0:128, 0:32], value=tile)
    return out
