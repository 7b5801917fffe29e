# L1_029 instance_norm: InstanceNorm2d without affine parameters on x [N, C, H, W]: every (n, c)
# plane is normalised by its own mean and population variance over H * W, eps = 1e-5.
#
# x is seen as [N * C, H * W]: one plane per partition, 128 planes per tile (the last tile masked),
# the whole plane along the free axis, so the statistics are free-axis reductions.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

EPS = 1e-5
TILE_P = 128


@nki.jit
def kernel(x):
    N, C, H, W = x.shape
    rows = N * C
    HW = H * W
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, HW))
    out2 = out.reshape((rows, HW))

    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(HW)[None, :]
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P + ip
        tile = nl.load(x2[r, jf], mask=(r < rows))
        mean = nl.mean(tile, axis=1, keepdims=True)                  # [128, 1]
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)
        rstd = nl.rsqrt(nl.add(var, EPS))
        y = nl.multiply(centred, rstd)
        nl.store(out2[r, jf], value=y, mask=(r < rows))
    return out
