# Column sums of a [128, 64] tile by reducing axis 0 with keepdims=True: as
# reduce_partition_axis.py, the partition axis cannot be reduced on the Vector engine.
#
# entry: colsum_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_reduce_axes line 15
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def colsum_kernel(x):
    out = nl.ndarray((1, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    col_sum = nl.sum(tile, axis=0, keepdims=True)  # Mistake: axis 0 is the partition axis
    nl.store(out, value=col_sum)
    return out
