# A matmul whose moving operand is 1024 columns wide: one nc_matmul streams at most 512 moving
# columns (one PSUM bank of float32), so N must be tiled by 512.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,1024]
# expect-error: err_size_of_dimension_exceed_arch_limit line 22
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
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)  # Mistake: 1024 moving columns in one nc_matmul
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
