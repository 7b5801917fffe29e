# Tutorial step 4, "Optimization 3: Further Blocking and DMA Efficiency Optimization" (NKI matrix
# multiplication tutorial, legacy dialect): out[M, N] = lhsT.T @ rhs, bfloat16. All three
# dimensions are blocked: for each N block the whole [M, BLOCK_N] result lives in SBUF (bfloat16)
# while the K blocks stream through it (a sequential_range, as the tutorial keeps the compiler
# from reordering it); each K block loads its rhs block once and every lhsT block once, with wide
# [128, BLOCK] loads (2-4 KiB per partition) for DMA efficiency; partial sums leave PSUM by adding
# into the SBUF result, and finished rows are packed into [128, BLOCK_N] tiles for wide stores.
# The cost model's calibration kernel #4 (docs/cost-model.md).
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_K = 128
TILE_M = 128
TILE_N = 512


@nki.jit
def matmul_block_all(lhsT, rhs, BM_TILES=16, BN_TILES=2, BK_TILES=8):
    K, M = lhsT.shape
    K2, N = rhs.shape
    BLOCK_M, BLOCK_N, BLOCK_K = TILE_M * BM_TILES, TILE_N * BN_TILES, TILE_K * BK_TILES
    assert K == K2 and M % BLOCK_M == 0 and N % BLOCK_N == 0 and K % BLOCK_K == 0
    NUM_M, NUM_N, NUM_K = M // BLOCK_M, N // BLOCK_N, K // BLOCK_K
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for nb in nl.affine_range(NUM_N):
        # The whole [M, BLOCK_N] result of this N block, one [128, 512] tile per (mb, bm, bn).
        result = nl.zeros((TILE_M, NUM_M, BM_TILES, BN_TILES, TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)

        for kb in nl.sequential_range(NUM_K):
            rhs_block = nl.ndarray((TILE_K, BK_TILES, BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(BK_TILES):
                row = (kb * BK_TILES + bk) * TILE_K
                rhs_block[:, bk, :] = nl.load(rhs[row:row + TILE_K, nb * BLOCK_N:(nb + 1) * BLOCK_N])

            for mb in nl.affine_range(NUM_M):
                lhs_block = nl.ndarray((TILE_K, BK_TILES, BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(BK_TILES):
                    row = (kb * BK_TILES + bk) * TILE_K
                    lhs_block[:, bk, :] = nl.load(lhsT[row:row + TILE_K, mb * BLOCK_M:(mb + 1) * BLOCK_M])

                for bn in nl.affine_range(BN_TILES):
                    for bm in nl.affine_range(BM_TILES):
                        acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(BK_TILES):
                            acc += nisa.nc_matmul(lhs_block[:, bk, bm * TILE_M:(bm + 1) * TILE_M],
                                                  rhs_block[:, bk, bn * TILE_N:(bn + 1) * TILE_N])
                        result[:, mb, bm, bn, :] = nl.add(result[:, mb, bm, bn, :], acc)

        for mb in nl.affine_range(NUM_M):
            for bm in nl.affine_range(BM_TILES):
                packed = nl.ndarray((TILE_M, BLOCK_N), dtype=result.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(BN_TILES):
                    packed[:, bn * TILE_N:(bn + 1) * TILE_N] = nl.copy(result[:, mb, bm, bn, :])
                row = (mb * BM_TILES + bm) * TILE_M
                nl.store(out[row:row + TILE_M, nb * BLOCK_N:(nb + 1) * BLOCK_N], value=packed)
    return out
