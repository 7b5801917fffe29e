# L1_027 batch_norm_small: BatchNorm2d in eval mode on x [N, C, H, W]:
#   y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c], eps = 1e-5.
#
# Channels go on the partitions (128 per tile, the last tile masked when C is not a multiple of
# 128), the H * W pixels of one image along the free axis in chunks of 512. The four per-channel
# vectors are folded once into a [128, 1] scale and shift, so every chunk is x * scale + shift.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

EPS = 1e-5
TILE_P = 128
TILE_F = 512


@nki.jit
def kernel(x, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    N, C, H, W = x.shape
    HW = H * W
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, HW))
    out3 = out.reshape((N, C, HW))

    ip = nl.arange(TILE_P)[:, None]
    i0 = nl.arange(1)[None, :]
    jf = nl.arange(TILE_F)[None, :]
    for ct in nl.affine_range(math.ceil(C / TILE_P)):
        c = ct * TILE_P + ip
        cmask = c < C
        weight = nl.load(bn_weight.reshape((C, 1))[c, i0], mask=cmask)        # [128, 1]
        bias = nl.load(bn_bias.reshape((C, 1))[c, i0], mask=cmask)
        mean = nl.load(bn_running_mean.reshape((C, 1))[c, i0], mask=cmask)
        var = nl.load(bn_running_var.reshape((C, 1))[c, i0], mask=cmask)
        scale = nl.multiply(weight, nl.rsqrt(nl.add(var, EPS)))               # weight / sqrt(var + eps)
        shift = nl.subtract(bias, nl.multiply(mean, scale))                   # bias - mean * scale
        for n in nl.affine_range(N):
            for f in nl.affine_range(math.ceil(HW / TILE_F)):
                j = f * TILE_F + jf
                valid = cmask & (j < HW)
                tile = nl.load(x3[n, c, j], mask=valid)
                y = nl.add(nl.multiply(tile, scale), shift)
                nl.store(out3[n, c, j], value=y, mask=valid)
    return out
