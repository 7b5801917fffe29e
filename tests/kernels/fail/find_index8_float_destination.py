# Top-8 positions per row: the index destination of nc_find_index8 is allocated with the data's
# dtype (float32), but the engine writes uint32 (or uint16) positions.
#
# entry: top8_index_kernel
# inputs: x=float32[128,512]
# expect-error: nkia_find_index8_output_dtype line 21
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def top8_index_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    top = nl.ndarray((P, 8), dtype=x.dtype, buffer=nl.sbuf)
    nisa.max8(dst=top, src=t)
    idx = nl.ndarray((P, 8), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=idx, data=t, vals=top)  # Mistake: idx should be nl.uint32
    nisa.dma_copy(dst=out, src=idx)
    return out
