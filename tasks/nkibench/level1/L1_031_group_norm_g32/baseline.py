# L1_031 group_norm_g32: GroupNorm with G = 32 groups on x [N, C, H, W]: the C / G channels of a
# group and all their pixels share one mean and (population) variance, eps = 1e-5; then a
# per-channel
#   y = x_hat * gn_weight[c] + gn_bias[c].
#
# One image at a time, seen as [G, (C / G) * H * W]: a group per partition, so the statistics are
# free-axis reductions. The normalised tile is viewed as [G, C / G, H * W] and multiplied by the
# weight and bias, loaded once as [G, C / G] tiles and broadcast along the pixels.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

GROUPS = 32  # a hyper-parameter of the module: it does not follow from the shapes
EPS = 1e-5


@nki.jit
def kernel(x, gn_weight, gn_bias):
    N, C, H, W = x.shape
    G = GROUPS
    CG = C // G                      # channels per group
    HW = H * W
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, G, CG * HW))
    out3 = out.reshape((N, G, CG * HW))

    ig = nl.arange(G)[:, None]
    jc = nl.arange(CG)[None, :]
    jf = nl.arange(CG * HW)[None, :]
    weight = nl.load(gn_weight.reshape((G, CG))[ig, jc])       # [G, CG]: channel g * CG + j
    bias = nl.load(gn_bias.reshape((G, CG))[ig, jc])
    weight3 = weight.reshape((G, CG, 1)).broadcast_to((G, CG, HW))
    bias3 = bias.reshape((G, CG, 1)).broadcast_to((G, CG, HW))

    for n in nl.affine_range(N):
        tile = nl.load(x3[n, ig, jf])                           # [G, CG * HW]
        mean = nl.mean(tile, axis=1, keepdims=True)             # [G, 1]
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)
        rstd = nl.rsqrt(nl.add(var, EPS))
        normed = nl.multiply(centred, rstd).reshape((G, CG, HW))
        y = nl.add(nl.multiply(normed, weight3), bias3)
        nl.store(out3[n, ig, jf], value=y.reshape((G, CG * HW)))
    return out
