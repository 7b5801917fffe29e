# Tutorial step 2, "Optimization 1: Removing Redundant Loads" (NKI matrix multiplication
# tutorial, legacy dialect): out[M, N] = lhsT.T @ rhs, bfloat16. For each 128-column stripe of
# lhsT all K/128 tiles are loaded once (hoisted out of the N loop) into one SBUF tensor; for each
# 512-column stripe of rhs its K/128 tiles are loaded once per M stripe, then the K matmuls of the
# output tile run back to back. The cost model's calibration kernel #2 (docs/cost-model.md).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K = 128
TILE_M = 128
TILE_N = 512


@nki.jit
def matmul_hoisted(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2 and K % TILE_K == 0 and M % TILE_M == 0 and N % TILE_N == 0
    KT = K // TILE_K
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for mi in nl.affine_range(M // TILE_M):
        lhs_stripe = nl.ndarray((TILE_K, KT, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for ki in nl.affine_range(KT):
            lhs_stripe[:, ki, :] = nl.load(lhsT[ki * TILE_K:(ki + 1) * TILE_K, mi * TILE_M:(mi + 1) * TILE_M])

        for ni in nl.affine_range(N // TILE_N):
            rhs_stripe = nl.ndarray((TILE_K, KT, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for ki in nl.affine_range(KT):
                rhs_stripe[:, ki, :] = nl.load(rhs[ki * TILE_K:(ki + 1) * TILE_K, ni * TILE_N:(ni + 1) * TILE_N])

            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for ki in nl.affine_range(KT):
                acc += nl.matmul(lhs_stripe[:, ki, :], rhs_stripe[:, ki, :], transpose_x=True)
            tile = nl.copy(acc, dtype=out.dtype)
            nl.store(out[mi * TILE_M:(mi + 1) * TILE_M, ni * TILE_N:(ni + 1) * TILE_N], value=tile)
    return out
