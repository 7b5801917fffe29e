# L1_001 matmul_small_fp32: out[M, N] = a[M, K] @ b[K, N] on the Tensor engine, float32 operands,
# accumulated in float32 in PSUM.
#
# The output is cut into [128, 512] tiles (512 float32 = one PSUM bank). Each tile sums its K/128
# partial products in one PSUM accumulation group. The PE's stationary operand is a.T: every [128,
# 128] block of a is loaded as it lies in HBM and nl.matmul (transpose_x=False) transposes it on the
# PE first. Trip counts come from the shapes: ragged M and N tiles are masked on load and store; a K
# that is not a multiple of 128 ends with one narrower step of exactly K % 128 rows (the contraction
# must not see rows past the end).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # output rows per tile (partitions of the result)
TILE_K = 128  # contraction step (partitions of both PE operands)
TILE_N = 512  # output columns per tile (moving free size)


@nki.jit
def kernel(a, b):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "inner dimensions differ"
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)

    im = nl.arange(TILE_M)[:, None]
    ik = nl.arange(TILE_K)[:, None]
    jk = nl.arange(TILE_K)[None, :]
    jn = nl.arange(TILE_N)[None, :]
    k_full = K // TILE_K
    k_tail = K % TILE_K

    for m in nl.affine_range(math.ceil(M / TILE_M)):
        rows = m * TILE_M + im
        for n in nl.affine_range(math.ceil(N / TILE_N)):
            cols = n * TILE_N + jn
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(k_full):
                a_tile = nl.load(a[rows, k * TILE_K + jk], mask=(rows < M))
                b_tile = nl.load(b[k * TILE_K + ik, cols], mask=(cols < N))
                acc += nl.matmul(a_tile, b_tile)
            if k_tail:
                # The last, partial contraction step: exactly k_tail rows of b, k_tail columns of a.
                it = nl.arange(k_tail)[:, None]
                jt = nl.arange(k_tail)[None, :]
                a_tile = nl.load(a[rows, k_full * TILE_K + jt], mask=(rows < M))
                b_tile = nl.load(b[k_full * TILE_K + it, cols], mask=(cols < N))
                acc += nl.matmul(a_tile, b_tile)
            res = nl.copy(acc, dtype=out.dtype)
            nl.store(out[rows, cols], value=res, mask=(rows < M) & (cols < N))
    return out
