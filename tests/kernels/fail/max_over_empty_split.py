# Row maxima of the columns past a split point, where the split is computed from the shape and
# comes out as the full width: the tile nisa.tensor_reduce reduces is [128, 0], and a max over no
# element has no value (guard the reduction, or split at a point inside the row).
#
# entry: tail_max_kernel
# inputs: x=float32[128,256]
# expect-error: nkia_reduce_empty_axis line 22
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tail_max_kernel(x):
    P, F = x.shape
    split = F  # meant: F // 2
    out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F - split), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[:, split:F])
    m = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=m, op=nl.maximum, data=t, axis=1)  # Mistake: the tile has no column
    nisa.dma_copy(dst=out, src=m)
    return out
