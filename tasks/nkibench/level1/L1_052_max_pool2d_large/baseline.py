# NKIBench max_pool2d_large: out = MaxPool2d(kernel_size=3, stride=2, padding=1)(x).
# x [N, C, H, W] is viewed as [N*C, H, W]: one image plane per partition, 128 planes per tile, the
# whole plane in the free dimensions. Each plane is loaded into the middle of a [H+2, W+2] SBUF tile
# whose border is a very negative number (the padding, never the max of a window). The output
# [OH, OW] is then the elementwise max of the 9 strided views padded[2*oh + kh, 2*ow + kw]. The last
# tile is masked when N*C is not a multiple of 128.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

K = 3          # window
STRIDE = 2
PAD = 1
NEG = -3.0e38  # padding value: below any input


@nki.jit
def kernel(x):
    N, C, H, W = x.shape
    OH = (H + 2 * PAD - K) // STRIDE + 1
    OW = (W + 2 * PAD - K) // STRIDE + 1
    out = nl.ndarray((N, C, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)
    rows = N * C
    xv = x.reshape((rows, H, W))
    ov = out.reshape((rows, OH, OW))

    P = nl.tile_size.pmax    # 128 planes per tile
    ip = nl.arange(P)[:, None, None]
    ih = nl.arange(H)[None, :, None]
    iw = nl.arange(W)[None, None, :]
    oh = nl.arange(OH)[None, :, None]
    ow = nl.arange(OW)[None, None, :]
    for t in nl.affine_range((rows + P - 1) // P):
        m = (t * P + ip < rows)
        padded = nl.full((P, H + 2 * PAD, W + 2 * PAD), NEG, dtype=x.dtype, buffer=nl.sbuf)
        padded[ip, PAD + ih, PAD + iw] = nl.load(xv[t * P + ip, ih, iw], mask=m)

        # window tap (0, 0), then the max with the other 8 taps
        result = nl.copy(padded[ip, STRIDE * oh, STRIDE * ow], mask=m)
        for kh in nl.static_range(K):
            for kw in nl.static_range(K):
                if kh != 0 or kw != 0:
                    result = nl.maximum(result, padded[ip, STRIDE * oh + kh, STRIDE * ow + kw], mask=m)
        nl.store(ov[t * P + ip, oh, ow], value=result, mask=m)
    return out
