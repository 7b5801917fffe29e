# L1_036 sum_all: torch.sum(x) over every element of x [rows, cols], a 0-d result.
#
# 128 rows per tile on the partitions: a free-axis sum gives the [128, 1] row sums (masked to the
# columns of the tile), rows past the end of the last tile are zeroed with nisa.affine_select, and a
# [128, 1] x [128, 1] matmul with a ones vector adds the 128 partitions on the Tensor engine,
# accumulating over all tiles in one [1, 1] PSUM tile.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 2048


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((), dtype=x.dtype, buffer=nl.shared_hbm)

    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    ones = nl.ones((TILE_P, 1), dtype=nl.float32)
    total = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.psum)
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        for c in nl.affine_range(math.ceil(cols / TILE_F)):
            r = t * TILE_P + ip
            j = c * TILE_F + jf
            tile = nl.load(x[r, j], mask=(r < rows) & (j < cols))
            row_sums = nl.sum(tile, axis=1, keepdims=True, mask=(j < cols))   # [128, 1]
            row_sums = nisa.affine_select(r < rows, row_sums, 0.0)
            total += nl.matmul(ones, row_sums, transpose_x=True)               # [1, 1]
    nl.store(out.reshape((1, 1)), value=nl.copy(total, dtype=out.dtype))
    return out
