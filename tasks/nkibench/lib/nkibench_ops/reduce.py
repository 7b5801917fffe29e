"""Reductions over the last dimension, one kernel each: F.cosine_similarity (the spatial mean of an
NCHW tensor is pool.global_avg_pool2d).

A tensor is seen as 2-D [rows, F] (F = its last dimension): 128 rows per tile on the partitions,
the row along the free axis in chunks of 2048 (the last chunk masked); the row statistics are
free-axis reductions accumulated over the chunks into [128, 1] tiles. The ragged last row tile is
masked on load and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
CHUNK = 2048


def _rows_cols(t):
    return math.prod(t.shape[:-1]), t.shape[-1]


@nki.jit
def cosine_similarity(x, y, eps=1e-8):
    """F.cosine_similarity(x, y, dim=-1) for x, y of one shape [..., F]: out has shape [...]:
    sum(x*y) / sqrt(max(sum(x*x), eps^2) * max(sum(y*y), eps^2)), as PyTorch computes it."""
    assert tuple(x.shape) == tuple(y.shape), "cosine_similarity: the operands differ in shape"
    rows, F = _rows_cols(x)
    out = nl.ndarray(tuple(x.shape[:-1]), dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, F))
    y2 = y.reshape((rows, F))
    o2 = out.reshape((rows, 1))
    ip = nl.arange(TILE_P)[:, None]
    j0 = nl.arange(1)[None, :]
    jf = nl.arange(CHUNK)[None, :]
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        i = t * TILE_P + ip
        rm = i < rows
        dot = nl.zeros((TILE_P, 1), dtype=nl.float32, buffer=nl.sbuf)
        xx = nl.zeros((TILE_P, 1), dtype=nl.float32, buffer=nl.sbuf)
        yy = nl.zeros((TILE_P, 1), dtype=nl.float32, buffer=nl.sbuf)
        for c in nl.sequential_range(math.ceil(F / CHUNK)):
            j = c * CHUNK + jf
            m = rm & (j < F)
            a = nl.load(x2[i, j], mask=m)
            b = nl.load(y2[i, j], mask=m)
            dot[...] = nl.add(dot, nl.sum(nl.multiply(a, b, mask=m), axis=1, keepdims=True, mask=m), mask=rm)
            xx[...] = nl.add(xx, nl.sum(nl.square(a, mask=m), axis=1, keepdims=True, mask=m), mask=rm)
            yy[...] = nl.add(yy, nl.sum(nl.square(b, mask=m), axis=1, keepdims=True, mask=m), mask=rm)
        denom = nl.multiply(nl.maximum(xx, eps * eps, mask=rm), nl.maximum(yy, eps * eps, mask=rm), mask=rm)
        cos = nl.multiply(dot, nl.rsqrt(denom, mask=rm), mask=rm, dtype=x.dtype)
        nl.store(o2[i, j0], value=cos, mask=rm)
    return out
