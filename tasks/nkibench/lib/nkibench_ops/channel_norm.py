"""Per-channel normalisations of NCHW tensors, one kernel each: BatchNorm2d (eval mode) and
GroupNorm.

Channels go on the partitions (128 per tile, the last tile masked), the pixels of one image along
the free axis in chunks of 512 (the last chunk masked).
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512


@nki.jit
def batch_norm2d(x, weight, bias, running_mean, running_var, eps=1e-5):
    """nn.BatchNorm2d in eval mode on x [N, C, *spatial]:
    out = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c].

    The four per-channel vectors are folded once per channel tile into a scale and a shift."""
    N, C = x.shape[0], x.shape[1]
    S = math.prod(x.shape[2:])
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, S))
    o3 = out.reshape((N, C, S))
    ip = nl.arange(TILE_P)[:, None]
    j0 = nl.arange(1)[None, :]
    jf = nl.arange(TILE_F)[None, :]
    for ct in nl.affine_range(math.ceil(C / TILE_P)):
        c = ct * TILE_P + ip
        cmask = c < C
        w = nl.load(weight.reshape((C, 1))[c, j0], mask=cmask)
        b = nl.load(bias.reshape((C, 1))[c, j0], mask=cmask)
        m = nl.load(running_mean.reshape((C, 1))[c, j0], mask=cmask)
        v = nl.load(running_var.reshape((C, 1))[c, j0], mask=cmask)
        scale = nl.multiply(w, nl.rsqrt(nl.add(v, eps)))
        shift = nl.subtract(b, nl.multiply(m, scale))
        for n in nl.affine_range(N):
            for s in nl.affine_range(math.ceil(S / TILE_F)):
                j = s * TILE_F + jf
                valid = cmask & (j < S)
                t = nl.load(x3[n, c, j], mask=valid)
                nl.store(o3[n, c, j], value=nl.add(nl.multiply(t, scale), shift), mask=valid)
    return out


def _chunks(total, size):
    return [(s, min(size, total - s)) for s in range(0, total, size)]


@nki.jit
def group_norm(x, num_groups, weight, bias, eps=1e-5):
    """nn.GroupNorm(num_groups, C) on x [N, C, *spatial]: each image's channels are split into
    num_groups groups of C / num_groups consecutive channels; each group is normalised by its own
    mean and (biased) variance over its channels and pixels, then out = xhat * weight[c] + bias[c].

    Per image, the groups go on the partitions (a group's channels are contiguous, so a group is one
    row of x[n] seen as [G, C/G * S]); three passes over HBM: the mean, the variance about it, and
    the normalisation with the per-channel affine folded into a per-partition scale and shift."""
    N, C = x.shape[0], x.shape[1]
    S = math.prod(x.shape[2:])
    G = num_groups
    assert C % G == 0, "group_norm: channels must divide into groups"
    Cg = C // G
    L = Cg * S                                   # elements per group
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    xg = x.reshape((N, G, L))
    og = out.reshape((N, G, L))
    wg = weight.reshape((G, Cg))
    bg = bias.reshape((G, Cg))
    inv_l = 1.0 / L
    for (g0, gs) in _chunks(G, TILE_P):
        w = nl.load(wg[g0:g0 + gs, :])                                          # [gs, Cg]
        b = nl.load(bg[g0:g0 + gs, :])
        for n in nl.affine_range(N):
            total = nl.zeros((gs, 1), dtype=nl.float32, buffer=nl.sbuf)
            for (j0, js) in _chunks(L, TILE_F):
                t = nl.load(xg[n, g0:g0 + gs, j0:j0 + js])
                total = nl.add(total, nl.sum(t, axis=1, keepdims=True))
            mean = nl.multiply(total, inv_l)
            sq = nl.zeros((gs, 1), dtype=nl.float32, buffer=nl.sbuf)
            for (j0, js) in _chunks(L, TILE_F):
                t = nl.load(xg[n, g0:g0 + gs, j0:j0 + js])
                d = nl.subtract(t, mean)
                sq = nl.add(sq, nl.sum(nl.multiply(d, d), axis=1, keepdims=True))
            rstd = nl.rsqrt(nl.add(nl.multiply(sq, inv_l), eps))
            for cc in nl.static_range(Cg):
                scale = nl.multiply(w[:, cc:cc + 1], rstd)                          # [gs, 1]
                shift = nl.subtract(b[:, cc:cc + 1], nl.multiply(mean, scale))
                for (s0, ss) in _chunks(S, TILE_F):
                    j0 = cc * S + s0
                    t = nl.load(xg[n, g0:g0 + gs, j0:j0 + ss])
                    nl.store(og[n, g0:g0 + gs, j0:j0 + ss], value=nl.add(nl.multiply(t, scale), shift))
    return out
