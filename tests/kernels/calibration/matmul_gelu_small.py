# gelu(a @ b) for float32 a [M, K] and b [K, N]: an affine loop over the M/128 row tiles of the
# output; each accumulates its K/128 partial products in one PSUM tile from
# `nl.zeros(..., buffer=nl.psum)`, `acc += nl.matmul(a_tile, b_tile)`, with the a tile [128, 128]
# loaded as it lies in HBM (rows of a on the partitions): `nl.matmul` with the default
# transpose_x=False transposes it on the Tensor engine for the stationary side. Then exact gelu
# (erf) and a store. Re-creates the "matmul_gelu_small" row of "Matmul and attention" in
# trn1-measurements.md (measured at a, b (256, 256): 2 row tiles, 2 K chunks, 30 µs device p50
# on trn1).
#
# entry: matmul_gelu_small
# inputs: a=float32[256,384] b=float32[384,256]
# reference:
#   import math
#   y = a @ b
#   return 0.5 * y * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))
# tolerance: atol=1e-4 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # output rows per tile (the stationary free size)
TILE_K = 128  # contraction per matmul: the partitions


@nki.jit
def matmul_gelu_small(a, b):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "a and b must agree on K"
    assert M % TILE_M == 0 and K % TILE_K == 0, "M and K must be multiples of 128"
    assert N <= 512, "one PSUM tile per row tile: N <= 512"
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        acc = nl.zeros((TILE_M, N), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // TILE_K):
            a_tile = nl.load(a[m * TILE_M:(m + 1) * TILE_M, k * TILE_K:(k + 1) * TILE_K])
            b_tile = nl.load(b[k * TILE_K:(k + 1) * TILE_K, :])
            acc += nl.matmul(a_tile, b_tile, transpose_x=False)
        y = nl.gelu(acc)
        nl.store(out[m * TILE_M:(m + 1) * TILE_M, :], value=y)
    return out
