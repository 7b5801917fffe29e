# L1_019 leaky_relu_fp32: leaky_relu(x) = max(x, 0.01 * x) (slope < 1), elementwise over x of any
# shape.
#
# x is seen as a 2-D [rows, cols] array (cols = its last dimension). Tiles of 128 rows x 512 columns
# go HBM -> SBUF -> the Vector engine (multiply, then maximum) -> HBM; the ragged last row / column
# tiles are masked on load and store (the masked-off lanes compute on garbage that is never stored).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512
NEGATIVE_SLOPE = 0.01


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cols = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    x2 = x.reshape((rows, cols))
    out2 = out.reshape((rows, cols))

    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(rows / TILE_P)):
        for c in nl.affine_range(math.ceil(cols / TILE_F)):
            i = r * TILE_P + ip
            j = c * TILE_F + jf
            valid = (i < rows) & (j < cols)
            t = nl.load(x2[i, j], mask=valid)
            y = nl.maximum(t, nl.multiply(t, NEGATIVE_SLOPE))
            nl.store(out2[i, j], value=y, mask=valid)
    return out
