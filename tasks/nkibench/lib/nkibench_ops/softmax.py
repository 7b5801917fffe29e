"""Softmax over the last dimension (torch.softmax(x, dim=-1)), one kernel, any leading shape.

The tensor is seen as [rows, cols] (cols = its last dimension), 128 rows per tile on the
partitions. A row that fits one tile (cols <= 8192) is done in one pass: subtract the row max,
exponentiate, sum, multiply by the reciprocal of the sum. Longer rows take three passes over
512-column chunks (the running max; the sum of exp(x - max); the normalised values). The last row
tile is masked when the row count is not a multiple of 128.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
ONE_PASS_COLS = 8192
CHUNK = 512


@nki.jit
def softmax(x):
    """softmax(x, dim=-1) for x of any shape, in x's dtype (computed in float32)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cols = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    x2 = x.reshape((rows, cols))
    o2 = out.reshape((rows, cols))
    ip = nl.arange(TILE_P)[:, None]
    if cols <= ONE_PASS_COLS:
        jf = nl.arange(cols)[None, :]
        for t in nl.affine_range(math.ceil(rows / TILE_P)):
            i = t * TILE_P + ip
            m = (i < rows)
            tile = nl.load(x2[i, jf], mask=m)
            row_max = nl.max(tile, axis=1, keepdims=True, dtype=nl.float32, mask=m)
            e = nl.exp(nl.subtract(tile, row_max, dtype=nl.float32, mask=m), mask=m)
            row_sum = nl.sum(e, axis=1, keepdims=True, mask=m)
            res = nl.multiply(e, nl.reciprocal(row_sum, mask=m), dtype=x.dtype, mask=m)
            nl.store(o2[i, jf], value=res, mask=m)
        return out
    jc = nl.arange(CHUNK)[None, :]
    j1 = nl.arange(1)[None, :]
    nch = math.ceil(cols / CHUNK)
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        i = t * TILE_P + ip
        m = (i < rows)
        row_max = nl.full((TILE_P, 1), -math.inf, dtype=nl.float32)
        for c in nl.sequential_range(nch):
            j = c * CHUNK + jc
            tile = nl.load(x2[i, j], mask=m & (j < cols))
            cmax = nl.max(tile, axis=1, keepdims=True, dtype=nl.float32, mask=m & (j < cols))
            row_max[ip, j1] = nl.maximum(row_max, cmax, mask=m)
        row_sum = nl.zeros((TILE_P, 1), dtype=nl.float32)
        for c in nl.sequential_range(nch):
            j = c * CHUNK + jc
            tile = nl.load(x2[i, j], mask=m & (j < cols))
            e = nl.exp(nl.subtract(tile, row_max, dtype=nl.float32, mask=m & (j < cols)),
                       mask=m & (j < cols))
            row_sum[ip, j1] = nl.add(row_sum, nl.sum(e, axis=1, keepdims=True, mask=m & (j < cols)),
                                     mask=m)
        inv = nl.reciprocal(row_sum, mask=m)
        for c in nl.affine_range(nch):
            j = c * CHUNK + jc
            tile = nl.load(x2[i, j], mask=m & (j < cols))
            e = nl.exp(nl.subtract(tile, row_max, dtype=nl.float32, mask=m & (j < cols)),
                       mask=m & (j < cols))
            nl.store(o2[i, j], value=nl.multiply(e, inv, dtype=x.dtype, mask=m & (j < cols)),
                     mask=m & (j < cols))
    return out
