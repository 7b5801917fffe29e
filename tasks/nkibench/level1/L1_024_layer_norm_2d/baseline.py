# L1_024 layer_norm_2d: LayerNorm over the last dimension F of x (any leading shape):
#   y = (x - mean) / sqrt(var + eps) * ln_weight + ln_bias, population variance, eps = 1e-5.
#
# x is seen as [rows, F]: 128 rows per tile on the partitions, the whole row along the free axis.
# Mean and variance are free-axis reductions ([128, 1] results that broadcast along the row). The
# weight and bias vectors [F] are loaded once onto one partition and broadcast to all 128. The
# ragged last row tile is masked on load and store.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

EPS = 1e-5
TILE_P = 128


@nki.jit
def kernel(x, ln_weight, ln_bias):
    F = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, F))
    out2 = out.reshape((rows, F))

    i0 = nl.arange(1)[:, None]
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(F)[None, :]
    gamma = nl.load(ln_weight.reshape((1, F))[i0, jf]).broadcast_to((TILE_P, F))
    beta = nl.load(ln_bias.reshape((1, F))[i0, jf]).broadcast_to((TILE_P, F))

    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P + ip
        tile = nl.load(x2[r, jf], mask=(r < rows))
        mean = nl.mean(tile, axis=1, keepdims=True)                  # [128, 1]
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)     # [128, 1]
        rstd = nl.rsqrt(nl.add(var, EPS))
        y = nl.add(nl.multiply(nl.multiply(centred, rstd), gamma), beta)
        nl.store(out2[r, jf], value=y, mask=(r < rows))
    return out
