# A padding mask that arrives as a float32 0/1 tensor, used directly as the predicate of
# tensor_copy_predicated: predicates are read as raw integers (uint8/uint16/uint32).
#
# entry: masked_fill_kernel
# inputs: x=float32[128,256] keep=float32[128,256]~uniform(0,1)
# expect-error: nkia_predicate_dtype line 22
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def masked_fill_kernel(x, keep):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    m = nl.ndarray((P, F), dtype=keep.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=m, src=keep)
    res = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=res, value=-10000.0)
    nisa.tensor_copy_predicated(dst=res, src=t, predicate=m)  # Mistake: m is float32
    nisa.dma_copy(dst=out, src=res)
    return out
