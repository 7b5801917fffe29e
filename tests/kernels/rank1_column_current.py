# A column of a table, picked from an SBUF tile with an integer index on the free axis
# (`cols[:, 2]`, as the NKI known-issues page says to index [N, 1] buffers), scales every row of x:
# the view keeps the partitions and a free axis of one, [128, 1].
#
# entry: column_scale_kernel
# inputs: x=float32[128,64] a=float32[128,4]
# reference:
#   return (x * a[:, 2:3],)
# tolerance: atol=0 rtol=0
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def column_scale_kernel(x, a):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    cols = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=cols, src=a)
    col = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=col, src=cols[:, 2])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=col)
    nisa.dma_copy(dst=out, src=t)
    return out
