# L1_037 mean_axis0: out[j] = mean_i x[i, j], x [rows, cols] -> [cols].
#
# A reduction across rows is a reduction across partitions, which the Tensor engine does: with a
# [128, 1] ones vector as the stationary operand, nl.matmul sums the 128 rows of a [128, 512] tile
# into a [1, 512] PSUM row, and successive row tiles accumulate in the same PSUM tile. Rows past the
# end of the last (ragged) row tile are zeroed with nisa.affine_select before they reach the PE, so
# they add nothing; ragged column chunks are masked on load and store.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512  # one PSUM bank of float32


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((cols,), dtype=x.dtype, buffer=nl.shared_hbm)
    out_row = out.reshape((1, cols))

    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    i0 = nl.arange(1)[:, None]
    ones = nl.ones((TILE_P, 1), dtype=nl.float32)
    for c in nl.affine_range(math.ceil(cols / TILE_F)):
        j = c * TILE_F + jf
        acc = nl.zeros((1, TILE_F), dtype=nl.float32, buffer=nl.psum)
        for t in nl.affine_range(math.ceil(rows / TILE_P)):
            r = t * TILE_P + ip
            tile = nl.load(x[r, j], mask=(r < rows) & (j < cols))
            tile = nisa.affine_select(r < rows, tile, 0.0)          # rows past the end -> 0
            acc += nl.matmul(ones, tile, transpose_x=True)          # [1, 512] column sums
        res = nl.multiply(acc, 1.0 / rows, dtype=out.dtype)
        nl.store(out_row[i0, j], value=res, mask=(j < cols))
    return out
