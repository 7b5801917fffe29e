# The output tensor allocated inside the tile loop: shared_hbm tensors are created once, at the
# kernel's top level (allocate out before the loop and store each tile into its rows).
#
# entry: exp_kernel
# inputs: x=float32[256,64]
# expect-error: err_shared_hbm_must_in_kernel_level line 16
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    for t in nl.affine_range(rows // 128):
        out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)  # Mistake: inside the loop
        tile = nl.load(x[t * 128:(t + 1) * 128, :])
        nl.store(out[t * 128:(t + 1) * 128, :], value=nl.exp(tile))
    return out
