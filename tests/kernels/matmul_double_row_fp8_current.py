# Double-row FP8 matmul on trn2: K = 512 contracted in two steps of 256, each step's operands copied
# into [128, 2, free] SBUF tiles (row 2p + l of the K chunk at partition p, slot l) and multiplied
# with perf_mode=nisa.matmul_perf_mode.double_row, accumulating in one float32 PSUM tile.
#
# entry: matmul_kernel
# target: trn2
# inputs: lhsT=float8_e4m3[512,128] rhs=float8_e4m3[512,512]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-5
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 256
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for kt in range(KT):
        a = nl.ndarray((128, 2, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        b = nl.ndarray((128, 2, N), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=lhsT[kt * 256:(kt + 1) * 256, :].reshape((128, 2, M)))
        nisa.dma_copy(dst=b, src=rhs[kt * 256:(kt + 1) * 256, :].reshape((128, 2, N)))
        nisa.nc_matmul(dst=acc, stationary=a, moving=b, perf_mode=nisa.matmul_perf_mode.double_row)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
