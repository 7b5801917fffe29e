# Scaling each row by its [P, 1] factor with nisa.tensor_tensor: unlike nl.multiply, the ISA
# instruction pairs elements one to one and does not broadcast; a [P, 1] operand belongs to
# nisa.tensor_scalar.
#
# entry: row_scale_kernel
# inputs: x=float32[128,512] s=float32[128,1]
# expect-error: nkia_free_size_mismatch line 22
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def row_scale_kernel(x, s):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    col = nl.ndarray((P, 1), dtype=s.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=col, src=s)
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=t, data2=col, op=nl.multiply)  # Mistake: [128, 512] x [128, 1]
    nisa.dma_copy(dst=out, src=y)
    return out
