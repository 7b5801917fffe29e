# Launching a per-tile kernel with an SPMD grid from inside another kernel: a grid exists only for
# the top-level launch from the host (call the inner kernel without a grid and loop over the
# tiles with nl.affine_range).
#
# entry: exp_kernel
# inputs: x=float32[256,64]
# expect-error: err_nested_kernel_with_spmd_grid line 24
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_tile_kernel(x, out):
    i = nl.program_id(0)
    tile = nl.load(x[i * 128:(i + 1) * 128, :])
    nl.store(out[i * 128:(i + 1) * 128, :], value=nl.exp(tile))


@nki.jit
def exp_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    exp_tile_kernel[x.shape[0] // 128](x, out)  # Mistake: a grid inside a kernel
    return out
