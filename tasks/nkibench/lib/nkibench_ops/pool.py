"""2-D pooling of NCHW tensors, one kernel each: max pooling, average pooling, and global average
pooling (adaptive average pooling to 1 x 1).

The N * C planes go on the partitions (128 per tile, the last tile short); a plane's rows are
processed in blocks of output rows, the block's input rows copied into a padded band (filled with
-inf for max pooling, 0 for average pooling) so that every window is a plain index expression
S * oh + kh, S * ow + kw, and one reduction over the window axes pools a whole block.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512
BLOCK_ELEMS = 4096     # band elements per partition per block (input rows x padded width)


def _pair(v):
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _chunks(total, size):
    return [(s, min(size, total - s)) for s in range(0, total, size)]


def _pool(x, kernel_size, stride, padding, is_max):
    N, C, H, W = x.shape
    KH, KW = _pair(kernel_size)
    SH, SW = _pair(stride if stride is not None else kernel_size)
    PH, PW = _pair(padding)
    OH = (H + 2 * PH - KH) // SH + 1
    OW = (W + 2 * PW - KW) // SW + 1
    rows = N * C
    out = nl.ndarray((N, C, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((rows, H, W))
    o3 = out.reshape((rows, OH, OW))
    WP = W + 2 * PW
    R = max(1, min(OH, (BLOCK_ELEMS // WP - KH) // SH + 1))     # output rows per block
    fill = -math.inf if is_max else 0.0
    for (p0, ps) in _chunks(rows, TILE_P):
        for (r0, nr) in _chunks(OH, R):
            BH = (nr - 1) * SH + KH
            top = r0 * SH - PH                    # image row of the band's first row
            lo = max(0, top)
            hi = min(H, top + BH)
            band = nl.full((ps, BH, WP), fill, dtype=x.dtype, buffer=nl.sbuf)
            if hi > lo:
                band[:, lo - top:hi - top, PW:PW + W] = nl.load(x3[p0:p0 + ps, lo:hi, :])
            wp, wh, kh, ww, kw = nl.mgrid[0:ps, 0:nr, 0:KH, 0:OW, 0:KW]
            win = band[wp, SH * wh + kh, SW * ww + kw]
            if is_max:
                res = nl.max(win, axis=[2, 4])
            else:
                res = nl.multiply(nl.sum(win, axis=[2, 4]), 1.0 / (KH * KW))
            nl.store(o3[p0:p0 + ps, r0:r0 + nr, :], value=res)
    return out


@nki.jit
def max_pool2d(x, kernel_size, stride=None, padding=0):
    """nn.MaxPool2d(kernel_size, stride, padding) on x [N, C, H, W] (stride defaults to the kernel
    size; the padding is -inf, so it never wins; floor mode). Returns [N, C, OH, OW] in HBM."""
    return _pool(x, kernel_size, stride, padding, True)


@nki.jit
def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """nn.AvgPool2d(kernel_size, stride, padding) on x [N, C, H, W], count_include_pad=True (the
    zero padding counts in every window's divisor, PyTorch's default); floor mode."""
    return _pool(x, kernel_size, stride, padding, False)


@nki.jit
def global_avg_pool2d(x):
    """nn.AdaptiveAvgPool2d((1, 1)) on x [N, C, *spatial]: the mean of each plane, [N, C, 1, 1]."""
    N, C = x.shape[0], x.shape[1]
    S = math.prod(x.shape[2:])
    rows = N * C
    out = nl.ndarray((N, C, 1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, S))
    o2 = out.reshape((rows, 1))
    for (p0, ps) in _chunks(rows, TILE_P):
        total = nl.zeros((ps, 1), dtype=nl.float32, buffer=nl.sbuf)
        for (j0, js) in _chunks(S, TILE_F):
            t = nl.load(x2[p0:p0 + ps, j0:j0 + js])
            total = nl.add(total, nl.sum(t, axis=1, keepdims=True))
        nl.store(o2[p0:p0 + ps, :], value=nl.multiply(total, 1.0 / S))
    return out
