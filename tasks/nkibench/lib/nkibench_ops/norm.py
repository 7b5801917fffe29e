"""Normalisations over the last dimension, one kernel each (nn.LayerNorm, RMSNorm).

A tensor is seen as 2-D [rows, F] (F = its last dimension): 128 rows per tile on the partitions,
the whole row along the free axis (F up to a few thousand fits one partition's SBUF). The
statistics are free-axis reductions ([128, 1], broadcast along the row); the affine vectors [F] are
loaded once onto one partition and broadcast to all 128. The ragged last row tile is masked on load
and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128


def _rows_cols(t):
    return math.prod(t.shape[:-1]), t.shape[-1]


@nki.jit
def layer_norm(x, weight, bias, eps=1e-5):
    """nn.LayerNorm over the last dimension F: (x - mean) * rsqrt(var + eps) * weight + bias,
    population variance; weight and bias are [F] (bias may be None: no shift)."""
    rows, F = _rows_cols(x)
    assert tuple(weight.shape) == (F,), "layer_norm: the weight must match the last dimension"
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, F))
    o2 = out.reshape((rows, F))

    i0 = nl.arange(1)[:, None]
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(F)[None, :]
    gamma = nl.load(weight.reshape((1, F))[i0, jf]).broadcast_to((TILE_P, F))
    beta = None
    if bias is not None:
        beta = nl.load(bias.reshape((1, F))[i0, jf]).broadcast_to((TILE_P, F))

    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P + ip
        tile = nl.load(x2[r, jf], mask=(r < rows))
        mean = nl.mean(tile, axis=1, keepdims=True)                  # [128, 1]
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)     # [128, 1]
        rstd = nl.rsqrt(nl.add(var, eps))
        y = nl.multiply(nl.multiply(centred, rstd), gamma)
        if beta is not None:
            y = nl.add(y, beta)
        nl.store(o2[r, jf], value=y, mask=(r < rows))
    return out


@nki.jit
def rms_norm(x, weight, eps):
    """RMSNorm over the last dimension F: weight * (x * rsqrt(mean(x^2) + eps)); weight is [F]
    (or None: no scale)."""
    rows, F = _rows_cols(x)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, F))
    o2 = out.reshape((rows, F))

    i0 = nl.arange(1)[:, None]
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(F)[None, :]
    w = None
    if weight is not None:
        assert tuple(weight.shape) == (F,), "rms_norm: the weight must match the last dimension"
        w = nl.load(weight.reshape((1, F))[i0, jf]).broadcast_to((TILE_P, F))

    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P + ip
        tile = nl.load(x2[r, jf], mask=(r < rows))
        mean_sq = nl.mean(nl.square(tile), axis=1, keepdims=True)   # [128, 1]
        rinv = nl.rsqrt(nl.add(mean_sq, eps))
        y = nl.multiply(tile, rinv)
        if w is not None:
            y = nl.multiply(y, w)
        nl.store(o2[r, jf], value=y, mask=(r < rows))
    return out
