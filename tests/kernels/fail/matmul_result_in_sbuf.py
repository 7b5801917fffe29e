# nc_matmul with its destination allocated in SBUF: the Tensor engine writes its results to PSUM;
# allocate the result with buffer=nl.psum and copy it to SBUF afterwards.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,512]
# expect-error: err_unsupported_memory line 22
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
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.nc_matmul(dst=res, stationary=a, moving=b)  # Mistake: res is in SBUF
    nisa.dma_copy(dst=out, src=res)
    return out
