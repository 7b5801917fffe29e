"""Elementwise operations over tensors of any shape, one kernel each.

A tensor is seen as 2-D [rows, cols] (cols = its last dimension), tiled 128 rows x 512 columns;
ragged tiles are masked on load and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512


def rows_cols(t):
    """(rows, cols) of `t` seen as 2-D: every leading dimension flattened into rows."""
    return math.prod(t.shape[:-1]), t.shape[-1]


@nki.jit
def unary(x, fn, dtype=None):
    """out = fn(x) elementwise; `fn` maps a tile to a tile (nl.relu, nl.exp, a lambda...)."""
    out = nl.ndarray(x.shape, dtype=dtype or x.dtype, buffer=nl.shared_hbm)
    rows, cols = rows_cols(x)
    x2 = x.reshape((rows, cols))
    o2 = out.reshape((rows, cols))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(rows / TILE_P)):
        for c in nl.affine_range(math.ceil(cols / TILE_F)):
            i = r * TILE_P + ip
            j = c * TILE_F + jf
            valid = (i < rows) & (j < cols)
            t = nl.load(x2[i, j], mask=valid)
            nl.store(o2[i, j], value=fn(t), mask=valid)
    return out


@nki.jit
def binary(a, b, fn):
    """out = fn(a, b) elementwise, a and b of the same shape (nl.add, nl.multiply, ...)."""
    assert tuple(a.shape) == tuple(b.shape), "binary: the operands differ in shape"
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = rows_cols(a)
    a2 = a.reshape((rows, cols))
    b2 = b.reshape((rows, cols))
    o2 = out.reshape((rows, cols))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(rows / TILE_P)):
        for c in nl.affine_range(math.ceil(cols / TILE_F)):
            i = r * TILE_P + ip
            j = c * TILE_F + jf
            valid = (i < rows) & (j < cols)
            ta = nl.load(a2[i, j], mask=valid)
            tb = nl.load(b2[i, j], mask=valid)
            nl.store(o2[i, j], value=fn(ta, tb), mask=valid)
    return out


@nki.jit
def row_broadcast(x, v, fn):
    """out[..., j] = fn(x[..., j], v[j]): a vector along the last dimension (a bias, a scale)."""
    rows, cols = rows_cols(x)
    assert tuple(v.shape) == (cols,), "row_broadcast: the vector must match the last dimension"
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, cols))
    o2 = out.reshape((rows, cols))
    v2 = v.reshape((1, cols))
    i0 = nl.arange(1)[:, None]
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for c in nl.affine_range(math.ceil(cols / TILE_F)):
        j = c * TILE_F + jf
        vt = nl.load(v2[i0, j], mask=(j < cols)).broadcast_to((TILE_P, TILE_F))
        for r in nl.affine_range(math.ceil(rows / TILE_P)):
            i = r * TILE_P + ip
            valid = (i < rows) & (j < cols)
            t = nl.load(x2[i, j], mask=valid)
            nl.store(o2[i, j], value=fn(t, vt), mask=valid)
    return out


@nki.jit
def channel_broadcast(x, v, fn):
    """out[n, c, ...] = fn(x[n, c, ...], v[c]) for x [N, C, *spatial]: a per-channel vector (a
    convolution's bias, a BatchNorm scale or shift)."""
    N, C = x.shape[0], x.shape[1]
    S = math.prod(x.shape[2:])
    assert tuple(v.shape) == (C,), "channel_broadcast: the vector must have one value per channel"
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, S))
    o3 = out.reshape((N, C, S))
    v2 = v.reshape((C, 1))
    ip = nl.arange(TILE_P)[:, None]
    j0 = nl.arange(1)[None, :]
    jf = nl.arange(TILE_F)[None, :]
    for ct in nl.affine_range(math.ceil(C / TILE_P)):
        i = ct * TILE_P + ip
        vt = nl.load(v2[i, j0], mask=(i < C))
        for n in nl.affine_range(N):
            for s in nl.affine_range(math.ceil(S / TILE_F)):
                j = s * TILE_F + jf
                valid = (i < C) & (j < S)
                t = nl.load(x3[n, i, j], mask=valid)
                nl.store(o3[n, i, j], value=fn(t, vt), mask=valid)
    return out
