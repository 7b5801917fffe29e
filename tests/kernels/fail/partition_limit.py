# Loading a whole [256, 64] input into one SBUF tile: SBUF has 128 partitions, so rows must be
# tiled in blocks of at most 128.
#
# entry: scale_kernel
# inputs: a=float32[256,64]
# expect-error: err_num_partition_exceed_arch_limit line 15
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scale_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    # Mistake: no tiling over rows.
    tile = nl.load(a)
    nl.store(out, value=nl.multiply(tile, 2.0))
    return out
