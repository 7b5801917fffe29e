# Elementwise add of two [rows, cols] tensors, 128 rows (one partition tile) at a time, with
# explicit SBUF destinations for every instruction.
#
# entry: add_kernel
# inputs: a=float32[384,512] b=float32[384,512]
# reference: a + b
# tolerance: atol=1e-6 rtol=1e-6
import nki
import nki.isa as nisa
import nki.language as nl

PMAX = 128


@nki.jit
def add_kernel(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)

    for t in nl.affine_range(rows // PMAX):
        lhs = nl.ndarray((PMAX, cols), dtype=a.dtype, buffer=nl.sbuf)
        rhs = nl.ndarray((PMAX, cols), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a[t * PMAX:(t + 1) * PMAX, 0:cols])
        nisa.dma_copy(dst=rhs, src=b[t * PMAX:(t + 1) * PMAX, 0:cols])

        total = nl.ndarray((PMAX, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=total, data1=lhs, data2=rhs, op=nl.add)
        nisa.dma_copy(dst=out[t * PMAX:(t + 1) * PMAX, 0:cols], src=total)
    return out
