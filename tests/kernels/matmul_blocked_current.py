# Blocked matmul, current dialect: out[M, N] = lhsT.T @ rhs with hoisted loads. All K tiles of a
# 128-column stripe of lhsT are DMA'd once into one SBUF tensor [128, K/128, 128]; rhs comes in
# [128, K/128, BLOCK_N] blocks; each [128, 512] output tile accumulates over K in PSUM and is copied
# into an SBUF result block that is stored with one DMA.
#
# entry: matmul_kernel
# inputs: lhsT=float32[512,256] rhs=float32[512,2048]
# reference: lhsT.T @ rhs
# tolerance: atol=2e-4 rtol=1e-4
import nki
import nki.isa as nisa
import nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512
BLOCK_N = 1024


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for m in range(M // TILE_M):
        lhs_tiles = nl.ndarray((TILE_K, KT, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in range(KT):
            nisa.dma_copy(dst=lhs_tiles[:, k, :],
                          src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])

        for nb in range(N // BLOCK_N):
            rhs_tiles = nl.ndarray((TILE_K, KT, BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in range(KT):
                nisa.dma_copy(dst=rhs_tiles[:, k, :],
                              src=rhs[k * TILE_K:(k + 1) * TILE_K, nb * BLOCK_N:(nb + 1) * BLOCK_N])

            res_block = nl.ndarray((TILE_M, BLOCK_N), dtype=nl.float32, buffer=nl.sbuf)
            for n in range(BLOCK_N // TILE_N):
                acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                for k in range(KT):
                    nisa.nc_matmul(dst=acc, stationary=lhs_tiles[:, k, :],
                                   moving=rhs_tiles[:, k, n * TILE_N:(n + 1) * TILE_N])
                nisa.tensor_copy(dst=res_block[:, n * TILE_N:(n + 1) * TILE_N], src=acc)
            nisa.dma_copy(dst=out[m * TILE_M:(m + 1) * TILE_M, nb * BLOCK_N:(nb + 1) * BLOCK_N], src=res_block)
    return out
