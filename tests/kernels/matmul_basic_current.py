# One matmul tile with nisa.nc_matmul: stationary lhsT [K, M] = [128, 128], moving rhs [K, N] =
# [128, 512], product [M, N] in a PSUM tile, evacuated to SBUF, then stored.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,512]
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

    stationary = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    moving = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=stationary, src=lhsT)
    nisa.dma_copy(dst=moving, src=rhs)

    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=stationary, moving=moving)

    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=result, src=acc)
    nisa.dma_copy(dst=out, src=result)
    return out
