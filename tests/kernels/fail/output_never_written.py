# Rows tiled with nl.affine_range(rows // 128) for an input of 96 rows: the loop runs zero times
# and the output is returned without ever being written (use (rows + 127) // 128 and a mask).
#
# entry: exp_kernel
# inputs: x=float32[96,64]
# expect-error: err_tensor_output_not_written_to line 19
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        tile = nl.load(x[t * 128:(t + 1) * 128, :])
        nl.store(out[t * 128:(t + 1) * 128, :], value=nl.exp(tile))
    return out  # Mistake: zero trips, out never written
