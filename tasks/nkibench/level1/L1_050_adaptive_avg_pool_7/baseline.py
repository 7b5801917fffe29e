# L1_050 adaptive_avg_pool_7: nn.AdaptiveAvgPool2d((7, 7)) on x [N, C, H, W] -> [N, C, 7, 7]. Output
# pixel (i, j) is the mean of rows floor(i * H / 7) .. ceil((i + 1) * H / 7) - 1 and the same for
# the columns (2 x 2 blocks when H = W = 14; uneven windows otherwise).
#
# The N * C planes of x go on the partitions (128 per tile, the last tile masked), each H x W plane
# along the free axes. The 49 windows are fixed by the shapes, so a static loop reduces each one (a
# free-axis sum over its rows and columns, scaled by 1 / its size) into one column of a [128, 49]
# result tile, stored once per tile.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

OUT_H = 7
OUT_W = 7
TILE_P = 128


@nki.jit
def kernel(x):
    N, C, H, W = x.shape
    rows = N * C
    out = nl.ndarray((N, C, OUT_H, OUT_W), dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((rows, H, W))
    out2 = out.reshape((rows, OUT_H * OUT_W))

    ip, ih, iw = nl.mgrid[0:TILE_P, 0:H, 0:W]
    op, oj = nl.mgrid[0:TILE_P, 0:OUT_H * OUT_W]
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P
        tile = nl.load(x3[r + ip, ih, iw], mask=(r + ip < rows))
        res = nl.ndarray((TILE_P, OUT_H * OUT_W), dtype=x.dtype)
        for i in nl.static_range(OUT_H):
            h0, h1 = (i * H) // OUT_H, -((-(i + 1) * H) // OUT_H)
            for j in nl.static_range(OUT_W):
                w0, w1 = (j * W) // OUT_W, -((-(j + 1) * W) // OUT_W)
                window_sum = nl.sum(tile[:, h0:h1, w0:w1], axis=[1, 2])       # [128, 1]
                res[:, i * OUT_W + j:i * OUT_W + j + 1] = nl.multiply(window_sum, 1.0 / ((h1 - h0) * (w1 - w0)))
        nl.store(out2[r + op, oj], value=res, mask=(r + op < rows))
    return out
