# Tutorial step 1, "Tiling matrix multiplications" (NKI matrix multiplication tutorial, legacy
# dialect): out[M, N] = lhsT.T @ rhs with lhsT [K, M] and rhs [K, N], bfloat16 in and out.
# Every [128, 512] output tile accumulates K/128 products in one PSUM tile; both operand tiles are
# loaded from HBM right before each matmul, so every lhsT tile is loaded N/512 times and every
# rhs tile M/128 times. The cost model's calibration kernel #1 (docs/cost-model.md).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K = 128  # contraction, on the partitions of both operands
TILE_M = 128  # stationary free size (nl.tile_size.gemm_stationary_fmax)
TILE_N = 512  # moving free size (nl.tile_size.gemm_moving_fmax)


@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2 and K % TILE_K == 0 and M % TILE_M == 0 and N % TILE_N == 0
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for mi in nl.affine_range(M // TILE_M):
        for ni in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for ki in nl.affine_range(K // TILE_K):
                a = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                a[...] = nl.load(lhsT[ki * TILE_K:(ki + 1) * TILE_K, mi * TILE_M:(mi + 1) * TILE_M])
                b[...] = nl.load(rhs[ki * TILE_K:(ki + 1) * TILE_K, ni * TILE_N:(ni + 1) * TILE_N])
                acc += nl.matmul(a, b, transpose_x=True)
            tile = nl.copy(acc, dtype=out.dtype)
            nl.store(out[mi * TILE_M:(mi + 1) * TILE_M, ni * TILE_N:(ni + 1) * TILE_N], value=tile)
    return out
