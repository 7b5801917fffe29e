# L1_012 outer_product_fp32: out[i, j] = a[i] * b[j]; a [M], b [N], out [M, N].
#
# A matmul with a contraction of one: a [1, 128] slice of a is the stationary operand (one
# partition, 128 columns -> 128 output rows) and a [1, 512] slice of b the moving one, so the PE
# writes a [128, 512] block of the outer product into PSUM. Ragged blocks are masked on load and
# store.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_N = 512


@nki.jit
def kernel(a, b):
    M = a.shape[0]
    N = b.shape[0]
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    a_row = a.reshape((1, M))
    b_row = b.reshape((1, N))

    i0 = nl.arange(1)[:, None]
    im = nl.arange(TILE_M)[:, None]
    jm = nl.arange(TILE_M)[None, :]
    jn = nl.arange(TILE_N)[None, :]

    for m in nl.affine_range(math.ceil(M / TILE_M)):
        a_tile = nl.load(a_row[i0, m * TILE_M + jm], mask=(m * TILE_M + jm < M))  # [1, 128]
        for n in nl.affine_range(math.ceil(N / TILE_N)):
            b_tile = nl.load(b_row[i0, n * TILE_N + jn], mask=(n * TILE_N + jn < N))  # [1, 512]
            block = nl.matmul(a_tile, b_tile, transpose_x=True)  # [128, 512] in PSUM
            res = nl.copy(block, dtype=out.dtype)
            rows = m * TILE_M + im
            cols = n * TILE_N + jn
            nl.store(out[rows, cols], value=res, mask=(rows < M) & (cols < N))
    return out
