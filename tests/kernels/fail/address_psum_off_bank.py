# A current-dialect PSUM accumulator placed with address=(0, 1024), half-way into bank 0: PSUM
# tensors placed with address= start on a bank boundary, a multiple of 2048 bytes.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,256]
# expect-error: nkia_allocation_misaligned line 21
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum, address=(0, 1024))  # Mistake: not a bank start
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
