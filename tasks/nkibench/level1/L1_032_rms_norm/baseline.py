# L1_032 rms_norm: RMSNorm over the last dimension F of x (any leading shape):
#   y = x * rsqrt(mean(x^2) + eps) * weight, eps = 1e-6.
#
# x is seen as [rows, F]: 128 rows per tile on the partitions, the whole row along the free axis;
# the mean of squares is a free-axis reduction ([128, 1], broadcast along the row). The weight [F]
# is loaded once onto one partition and broadcast to all 128. The ragged last row tile is masked on
# load and store.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

EPS = 1e-6
TILE_P = 128


@nki.jit
def kernel(x, weight):
    F = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, F))
    out2 = out.reshape((rows, F))

    i0 = nl.arange(1)[:, None]
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(F)[None, :]
    w = nl.load(weight.reshape((1, F))[i0, jf]).broadcast_to((TILE_P, F))

    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P + ip
        tile = nl.load(x2[r, jf], mask=(r < rows))
        mean_sq = nl.mean(nl.square(tile), axis=1, keepdims=True)   # [128, 1]
        rinv = nl.rsqrt(nl.add(mean_sq, EPS))
        y = nl.multiply(nl.multiply(tile, rinv), w)
        nl.store(out2[r, jf], value=y, mask=(r < rows))
    return out
