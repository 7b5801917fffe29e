# L1_035 sum_axis1: out[i] = sum_j x[i, j], x [rows, cols] -> [rows].
#
# x is seen as [rows, cols] with the reduced axis last: 128 rows per tile on the partitions, the
# whole row along the free axis, so each tile is one free-axis reduction into a [128, 1] column,
# stored as 128 consecutive outputs. The ragged last row tile is masked on load and store.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128


@nki.jit
def kernel(x):
    cols = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    out = nl.ndarray(x.shape[:-1], dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, cols))
    out2 = out.reshape((rows, 1))

    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(cols)[None, :]
    i0 = nl.arange(1)[None, :]
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P + ip
        tile = nl.load(x2[r, jf], mask=(r < rows))
        res = nl.sum(tile, axis=1, keepdims=True)                # [128, 1]
        nl.store(out2[r, i0], value=res, mask=(r < rows))
    return out
