# A DMA transpose asked to swap only the two leading axes of a 3-D block: the DMA engines permute a
# 3-D source only as (2, 1, 0) (swap on chip, or reorder the loads).
#
# entry: swap_kernel
# inputs: x=float32[4,64,128]
# expect-error: nkia_dma_transpose_layout line 17
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def swap_kernel(x):
    A, B, C = x.shape
    out = nl.ndarray((B, A, C), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((B, A, C), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=x, axes=(1, 0, 2))  # Mistake: not a DMA permutation
    nisa.dma_copy(dst=out, src=t)
    return out
