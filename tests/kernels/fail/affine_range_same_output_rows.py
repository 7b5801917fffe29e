# Every affine_range iteration stores its tile into the same output rows out[0:128]: the
# iterations may run in any order, so their writes collide (offset the store by the loop
# variable).
#
# entry: exp_kernel
# inputs: x=float32[512,64]
# expect-error: err_unexpected_output_dependencies line 20
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        tile = nl.load(x[t * 128:(t + 1) * 128, :])
        nl.store(out[0:128, :], value=nl.exp(tile))  # Mistake: same rows every iteration
    return out
