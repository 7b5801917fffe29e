"""Residual-pattern helpers, one kernel per PyTorch op: operations with a learned scalar (a 0-d
nn.Parameter such as a residual weight alpha).

A tensor is seen as 2-D [rows, cols] (cols = its last dimension), tiled 128 rows x 512 columns;
ragged tiles are masked on load and store. The scalar is loaded once onto one partition and
broadcast to the whole tile.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512


def _rows_cols(t):
    cols = t.shape[-1]
    return math.prod(t.shape[:-1]), cols


@nki.jit
def scalar_broadcast(x, s, fn):
    """out = fn(x, s) elementwise, `s` a tensor holding one value (0-d, [1] or [1, 1]): a learned
    scalar times a tensor (`alpha * x`: fn = nl.multiply)."""
    assert math.prod(s.shape) == 1, "scalar_broadcast: s must hold exactly one value"
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows, cols = _rows_cols(x)
    x2 = x.reshape((rows, cols))
    o2 = out.reshape((rows, cols))
    s2 = s.reshape((1, 1))
    i0 = nl.arange(1)[:, None]
    j0 = nl.arange(1)[None, :]
    st = nl.load(s2[i0, j0]).broadcast_to((TILE_P, TILE_F))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(rows / TILE_P)):
        for c in nl.affine_range(math.ceil(cols / TILE_F)):
            i = r * TILE_P + ip
            j = c * TILE_F + jf
            valid = (i < rows) & (j < cols)
            t = nl.load(x2[i, j], mask=valid)
            nl.store(o2[i, j], value=fn(t, st), mask=valid)
    return out


@nki.jit
def scalar_unary(s, fn):
    """out = fn(s) for a tensor holding one value (0-d, [1] or [1, 1]), the same shape as s:
    arithmetic on a learned scalar (`1 - alpha`: fn = lambda t: nl.subtract(1.0, t))."""
    assert math.prod(s.shape) == 1, "scalar_unary: s must hold exactly one value"
    out = nl.ndarray(s.shape, dtype=s.dtype, buffer=nl.shared_hbm)
    i0 = nl.arange(1)[:, None]
    j0 = nl.arange(1)[None, :]
    t = nl.load(s.reshape((1, 1))[i0, j0])
    nl.store(out.reshape((1, 1))[i0, j0], value=fn(t))
    return out
