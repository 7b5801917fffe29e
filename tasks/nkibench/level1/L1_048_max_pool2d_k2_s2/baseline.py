# L1_048 max_pool2d_k2_s2: nn.MaxPool2d(kernel_size=2, stride=2) on x [N, C, H, W]: the maximum of
# each 2 x 2 window.
#
# The N * C planes of x go on the partitions (128 per tile, the last tile masked), each H x W plane
# along the free axes. Output pixel (oh, ow) reduces the window rows S * oh + kh and columns S * ow
# + kw: indexing the tile with the 5-D index space [128, OH, K, OW, K] gives all windows at once,
# and one reduction over axes 2 and 4 pools them.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

K = 2      # kernel size
S = 2      # stride
PAD = 0    # padding on every side
TILE_P = 128


@nki.jit
def kernel(x):
    N, C, H, W = x.shape
    OH = (H + 2 * PAD - K) // S + 1
    OW = (W + 2 * PAD - K) // S + 1
    rows = N * C
    out = nl.ndarray((N, C, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((rows, H, W))
    out3 = out.reshape((rows, OH, OW))

    ip, ih, iw = nl.mgrid[0:TILE_P, 0:H, 0:W]
    op, oh, ow = nl.mgrid[0:TILE_P, 0:OH, 0:OW]
    wp, wh, kh, ww, kw = nl.mgrid[0:TILE_P, 0:OH, 0:K, 0:OW, 0:K]
    for t in nl.affine_range(math.ceil(rows / TILE_P)):
        r = t * TILE_P
        tile = nl.load(x3[r + ip, ih, iw], mask=(r + ip < rows))
        res = nl.max(tile[wp, S * wh + kh, S * ww + kw], axis=[2, 4])            # [128, OH, OW]
        nl.store(out3[r + op, oh, ow], value=res, mask=(r + op < rows))
    return out
