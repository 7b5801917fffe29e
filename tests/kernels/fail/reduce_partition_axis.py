# Column sums by reducing axis 0 of a tile: axis 0 is the partition axis, which the Vector
# engine's reductions cannot cross (transpose first, or matmul with a ones vector).
#
# entry: colsum_kernel
# inputs: x=float32[128,128]
# expect-error: nkia_reduce_axes line 15
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def colsum_kernel(x):
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.load(x)
    col_sum = nl.sum(tile, axis=0)  # Mistake: axis 0 is the partition axis
    nl.store(out, value=col_sum)
    return out
