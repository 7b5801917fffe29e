"""Residual-pattern helpers, one kernel per PyTorch op: operations with a learned scalar (a 0-d
nn.Parameter such as a residual weight alpha).

The scalar is loaded once onto one partition and broadcast to the whole tile.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import elementwise


@nki.jit
def scalar_broadcast(x, s, fn):
    """out = fn(x, s) elementwise, `s` a tensor holding one value (0-d, [1] or [1, 1]): a learned
    scalar times a tensor (`alpha * x`: fn = nl.multiply). The scalar is loaded once and broadcast
    to elementwise.unary's tiles."""
    assert math.prod(s.shape) == 1, "scalar_broadcast: s must hold exactly one value"
    i0 = nl.arange(1)[:, None]
    j0 = nl.arange(1)[None, :]
    st = nl.load(s.reshape((1, 1))[i0, j0]).broadcast_to((elementwise.TILE_P, elementwise.TILE_F))
    return elementwise.unary(x, lambda t: fn(t, st))


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
