# Per-row statistics kept in a 1-D SBUF tile: on-chip tiles need a partition axis and at least one
# free axis, so a column of 128 values is a [128, 1] tile.
#
# entry: rowmax_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_insufficient_rank line 17
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rowmax_kernel(x):
    out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x)
    row_max = nl.ndarray((128,), dtype=x.dtype, buffer=nl.sbuf)  # Mistake: a 1-D on-chip tile: use (128, 1)
    nisa.tensor_reduce(dst=row_max, op=nl.maximum, data=tile, axis=1)
    nisa.dma_copy(dst=out, src=row_max)
    return out
