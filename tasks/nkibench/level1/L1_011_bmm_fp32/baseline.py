# L1_011 bmm_fp32: out[i] = a[i] @ b[i] for every batch i; a [B, M, K], b [B, K, N].
#
# One tiled matmul per batch entry: [128, 512] output tiles accumulate their K/128 partial products
# in PSUM; nl.matmul transposes each [128, 128] block of a[i] on the PE (the stationary operand is
# a[i].T). Ragged M / N tiles are masked; a K that is not a multiple of 128 ends with a narrower
# step of exactly K % 128 rows.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_K = 128
TILE_N = 512


@nki.jit
def kernel(a, b):
    B, M, K = a.shape
    _, _, N = b.shape
    out = nl.ndarray((B, M, N), dtype=a.dtype, buffer=nl.shared_hbm)

    im = nl.arange(TILE_M)[:, None]
    ik = nl.arange(TILE_K)[:, None]
    jk = nl.arange(TILE_K)[None, :]
    jn = nl.arange(TILE_N)[None, :]
    k_full = K // TILE_K
    k_tail = K % TILE_K

    for i in nl.affine_range(B):
        for m in nl.affine_range(math.ceil(M / TILE_M)):
            rows = m * TILE_M + im
            for n in nl.affine_range(math.ceil(N / TILE_N)):
                cols = n * TILE_N + jn
                acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(k_full):
                    a_tile = nl.load(a[i, rows, k * TILE_K + jk], mask=(rows < M))
                    b_tile = nl.load(b[i, k * TILE_K + ik, cols], mask=(cols < N))
                    acc += nl.matmul(a_tile, b_tile)
                if k_tail:
                    it = nl.arange(k_tail)[:, None]
                    jt = nl.arange(k_tail)[None, :]
                    a_tile = nl.load(a[i, rows, k_full * TILE_K + jt], mask=(rows < M))
                    b_tile = nl.load(b[i, k_full * TILE_K + it, cols], mask=(cols < N))
                    acc += nl.matmul(a_tile, b_tile)
                res = nl.copy(acc, dtype=out.dtype)
                nl.store(out[i, rows, cols], value=res, mask=(rows < M) & (cols < N))
    return out
