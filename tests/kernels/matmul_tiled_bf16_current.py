# Tiled matmul on bfloat16 operands, float32 PSUM accumulation and float32 result (current dialect,
# accumulate=None: the first matmul into the PSUM tile overwrites it, later ones add).
#
# entry: matmul_kernel
# inputs: lhsT=bfloat16[256,256] rhs=bfloat16[256,512]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-4
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in range(M // 128):
        acc = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.psum)
        for k in range(K // 128):
            a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
            b = nl.ndarray((128, N), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
            nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, :])
            nisa.nc_matmul(dst=acc, stationary=a, moving=b)
        res = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, :], src=res)
    return out
