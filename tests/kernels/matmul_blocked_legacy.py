# Blocked matmul: out[M, N] = lhsT.T @ rhs. Loads are hoisted out of the inner loops: for each
# 128-column stripe of lhsT all K tiles are loaded once into one SBUF tensor [128, K/128, 128], and
# rhs is loaded in [128, K/128, BLOCK_N] blocks that feed BLOCK_N/512 output tiles each. Every
# output tile still accumulates over K in its own PSUM tile; a whole [128, BLOCK_N] result block
# is assembled in SBUF and stored with one DMA.
#
# entry: matmul_kernel
# inputs: lhsT=float32[512,256] rhs=float32[512,2048]
# reference: lhsT.T @ rhs
# tolerance: atol=2e-4 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K, TILE_M, TILE_N = 128, 128, 512
BLOCK_N = 1024


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        # Every K tile of this stripe of lhsT, loaded once and reused for all of N.
        lhs_tiles = nl.ndarray((TILE_K, KT, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            lhs_tiles[:, k, :] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])

        for nb in nl.affine_range(N // BLOCK_N):
            rhs_tiles = nl.ndarray((TILE_K, KT, BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                rhs_tiles[:, k, :] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, nb * BLOCK_N:(nb + 1) * BLOCK_N])

            res_block = nl.ndarray((TILE_M, BLOCK_N), dtype=nl.float32, buffer=nl.sbuf)
            for n in nl.affine_range(BLOCK_N // TILE_N):
                acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                for k in nl.affine_range(KT):
                    acc += nl.matmul(lhs_tiles[:, k, :], rhs_tiles[:, k, n * TILE_N:(n + 1) * TILE_N],
                                     transpose_x=True)
                res_block[:, n * TILE_N:(n + 1) * TILE_N] = nl.copy(acc)
            nl.store(out[m * TILE_M:(m + 1) * TILE_M, nb * BLOCK_N:(nb + 1) * BLOCK_N], value=res_block)
    return out
