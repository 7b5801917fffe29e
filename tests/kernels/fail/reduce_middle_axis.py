# Summing a [128, 4, 64] tile (4 heads of 64) over the heads with nisa.tensor_reduce(axis=1): the
# reduced axes must be the last free axes (lay the tile out as [128, 64, 4] and reduce axis 2, or
# add the four [128, 64] slices).
#
# entry: head_sum_kernel
# inputs: x=float32[128,4,64]
# expect-error: nkia_reduce_axes line 21
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def head_sum_kernel(x):
    P, H, D = x.shape
    out = nl.ndarray((P, D), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, H, D), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    s = nl.ndarray((P, D), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)  # Mistake: axis 1 is not the last axis
    nisa.dma_copy(dst=out, src=s)
    return out
