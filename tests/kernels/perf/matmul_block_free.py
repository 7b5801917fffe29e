# Tutorial step 3, "Optimization 2: Reuse More Load Through Blocking" (NKI matrix multiplication
# tutorial, legacy dialect): out[M, N] = lhsT.T @ rhs, bfloat16. Both free dimensions are blocked:
# a block of BM_TILES lhsT stripes (all of K) and a block of BN_TILES rhs stripes are held in SBUF
# together, and every pair of their stripes gives one output tile, so each rhs load now feeds
# BM_TILES output tiles instead of one. The cost model's calibration kernel #3.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K = 128
TILE_M = 128
TILE_N = 512
BM_TILES = 2  # output tiles per block along M (block of 256 rows)
BN_TILES = 2  # output tiles per block along N (block of 1024 columns)


@nki.jit
def matmul_block_free(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    BLOCK_M, BLOCK_N = TILE_M * BM_TILES, TILE_N * BN_TILES
    assert K == K2 and K % TILE_K == 0 and M % BLOCK_M == 0 and N % BLOCK_N == 0
    KT = K // TILE_K
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for mb in nl.affine_range(M // BLOCK_M):
        lhs_block = nl.ndarray((TILE_K, BM_TILES, KT, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(BM_TILES):
            col = mb * BLOCK_M + bm * TILE_M
            for ki in nl.affine_range(KT):
                lhs_block[:, bm, ki, :] = nl.load(lhsT[ki * TILE_K:(ki + 1) * TILE_K, col:col + TILE_M])

        for nb in nl.affine_range(N // BLOCK_N):
            rhs_block = nl.ndarray((TILE_K, BN_TILES, KT, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(BN_TILES):
                col = nb * BLOCK_N + bn * TILE_N
                for ki in nl.affine_range(KT):
                    rhs_block[:, bn, ki, :] = nl.load(rhs[ki * TILE_K:(ki + 1) * TILE_K, col:col + TILE_N])

            for bm in nl.affine_range(BM_TILES):
                for bn in nl.affine_range(BN_TILES):
                    acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                    for ki in nl.affine_range(KT):
                        acc += nl.matmul(lhs_block[:, bm, ki, :], rhs_block[:, bn, ki, :], transpose_x=True)
                    tile = nl.copy(acc, dtype=out.dtype)
                    row = mb * BLOCK_M + bm * TILE_M
                    col = nb * BLOCK_N + bn * TILE_N
                    nl.store(out[row:row + TILE_M, col:col + TILE_N], value=tile)
    return out
