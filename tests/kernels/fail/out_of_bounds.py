# Ragged rows without a mask: 200 rows round up to two tiles of 128, and the second tile's index
# tile reaches rows 200..255, past the end of the input.
#
# entry: exp_kernel
# inputs: x=float32[200,64]
# expect-error: err_tensor_access_out_of_bound line 19
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        r = t * 128 + ip
        tile = nl.load(x[r, jf])  # Mistake: no mask: the last tile reads rows 200..255
        nl.store(out[r, jf], value=nl.exp(tile))
    return out
