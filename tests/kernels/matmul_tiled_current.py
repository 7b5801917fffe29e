# Tiled matmul, current dialect: out[M, N] = lhsT.T @ rhs, [128, 512] output tiles, K accumulated in
# PSUM by nc_matmul (accumulate=False on the first K tile, True after it).
#
# entry: matmul_kernel
# inputs: lhsT=float32[384,256] rhs=float32[384,1024]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-4
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for m in range(M // TILE_M):
        for n in range(N // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in range(K // TILE_K):
                a = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[nl.ds(k * TILE_K, TILE_K), nl.ds(m * TILE_M, TILE_M)])
                nisa.dma_copy(dst=b, src=rhs[nl.ds(k * TILE_K, TILE_K), nl.ds(n * TILE_N, TILE_N)])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=(k > 0))
            res = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[nl.ds(m * TILE_M, TILE_M), nl.ds(n * TILE_N, TILE_N)], src=res)
    return out
