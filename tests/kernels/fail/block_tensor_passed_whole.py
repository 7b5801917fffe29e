# A block tensor (4, par_dim(128), 256) passed whole to nl.exp: compute APIs take tiles, whose
# first axis is the partition axis, so pick one block at a time (buf[i]).
#
# entry: exp_kernel
# inputs: x=float32[512,256]
# expect-error: err_failed_to_infer_tile_from_local_tensor line 19
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((4, nl.par_dim(128), cols), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        buf[i] = nl.load(x[i * 128:(i + 1) * 128, :])
    y = nl.exp(buf)  # Mistake: nl.exp(buf[i]) per block
    for i in nl.affine_range(4):
        nl.store(out[i * 128:(i + 1) * 128, :], value=y[i])
    return out
