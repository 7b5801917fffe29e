# Tiled matmul: out[M, N] = lhsT.T @ rhs with lhsT [K, M] and rhs [K, N]. The output is cut into
# [128, 512] tiles; each accumulates its K/128 partial products in one PSUM tile
# (`psum += nl.matmul(...)`, a Tensor-engine accumulation group) before it is copied out.
#
# entry: matmul_kernel
# inputs: lhsT=float32[384,256] rhs=float32[384,1024]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_K = 128   # contraction: partitions of both operands
TILE_M = 128   # stationary free size
TILE_N = 512   # moving free size (one PSUM bank of float32)


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                b = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nl.matmul(a, b, transpose_x=True)
            res = nl.copy(acc, dtype=out.dtype)
            nl.store(out[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res)
    return out
