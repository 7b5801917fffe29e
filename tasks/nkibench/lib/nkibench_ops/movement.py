"""Data movement, one kernel each: the rotate-half of rotary embeddings, and an elementwise op
with a tensor broadcast over the leading dimensions (torch.cat is concat.cat).

A tensor is seen as 2-D [rows, cols] (cols = its last dimension), tiled 128 rows x 512 columns;
ragged tiles are masked on load and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import elementwise

TILE_P = 128
TILE_F = 512


@nki.jit
def rotate_half(x):
    """torch.cat([-x2, x1], dim=-1) for x = [x1 | x2] split in halves along an even last
    dimension (the rotation of rotary position embeddings)."""
    rows, cols = elementwise.rows_cols(x)
    assert cols % 2 == 0, "rotate_half: the last dimension must be even"
    h = cols // 2
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, cols))
    o2 = out.reshape((rows, cols))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(rows / TILE_P)):
        for c in nl.affine_range(math.ceil(h / TILE_F)):
            i = r * TILE_P + ip
            j = c * TILE_F + jf
            valid = (i < rows) & (j < h)
            lo = nl.load(x2[i, j], mask=valid)          # x1
            hi = nl.load(x2[i, h + j], mask=valid)      # x2
            nl.store(o2[i, j], value=nl.negative(hi, mask=valid), mask=valid)
            nl.store(o2[i, h + j], value=lo, mask=valid)
    return out


@nki.jit
def trailing_broadcast(x, t, fn):
    """out = fn(x, t) with t broadcast over x's leading dimensions: t's shape is x's trailing
    dimensions, with leading ones allowed (x [B, H, S, D] times t [1, 1, S, D], say)."""
    tshape = tuple(t.shape)
    while len(tshape) > 1 and tshape[0] == 1:
        tshape = tshape[1:]
    k = len(tshape)
    assert tuple(x.shape[len(x.shape) - k:]) == tshape, \
        "trailing_broadcast: t must match the trailing dimensions of x"
    cols = x.shape[-1]
    S = math.prod(tshape[:-1])                 # rows of t
    N = math.prod(x.shape[:len(x.shape) - k])  # copies of t in x
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, S, cols))
    o3 = out.reshape((N, S, cols))
    t2 = t.reshape((S, cols))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for s in nl.affine_range(math.ceil(S / TILE_P)):
        for c in nl.affine_range(math.ceil(cols / TILE_F)):
            i = s * TILE_P + ip
            j = c * TILE_F + jf
            valid = (i < S) & (j < cols)
            tt = nl.load(t2[i, j], mask=valid)
            for n in nl.affine_range(N):
                a = nl.load(x3[n, i, j], mask=valid)
                nl.store(o3[n, i, j], value=fn(a, tt), mask=valid)
    return out
