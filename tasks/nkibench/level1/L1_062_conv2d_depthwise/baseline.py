# NKIBench conv2d_depthwise: out = nn.Conv2d(128, 128, 3, padding=1, groups=128)(x), x [N, C, H, W];
# the weight [C, 1, 3, 3] and bias [C] are kernel arguments (conv_weight, conv_bias).
# Each channel is convolved with its own 3 x 3 filter, so there is no contraction for the Tensor
# engine: channels go on the partitions (128 per tile) and the Vector engine does the work. Per image,
# the planes are loaded into a zeroed [H+2, W+2] tile (the zeros are the padding), and the output is
# the bias plus the sum over the 9 taps of (shifted plane) x (that channel's tap weight, a
# per-partition scalar): one multiply-add instruction per tap (nisa.tensor_scalar for the first,
# nisa.scalar_tensor_tensor for the others).
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

PAD = 1


@nki.jit
def kernel(x, conv_weight, conv_bias):
    N, C, H, W = x.shape
    _, _, KH, KW = conv_weight.shape
    OH = H + 2 * PAD - KH + 1
    OW = W + 2 * PAD - KW + 1
    out = nl.ndarray((N, C, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax
    CT = min(C, P)                       # channels per tile
    assert C % CT == 0
    w_taps = conv_weight.reshape((C, KH * KW))
    bias_col = conv_bias.reshape((C, 1))

    for ct in nl.affine_range(C // CT):
        w = nl.load(w_taps[ct * CT:(ct + 1) * CT, :])              # [CT, 9]: a filter per partition
        b = nl.load(bias_col[ct * CT:(ct + 1) * CT, 0:1])          # [CT, 1]
        for n in nl.affine_range(N):
            padded = nl.zeros((CT, H + 2 * PAD, W + 2 * PAD), dtype=x.dtype, buffer=nl.sbuf)
            padded[:, PAD:PAD + H, PAD:PAD + W] = nl.load(x[n, ct * CT:(ct + 1) * CT, :, :])
            # tap 0 and the bias: acc = plane * w[0] + b; then acc = shifted_plane * w[tap] + acc
            acc = nisa.tensor_scalar(data=padded[:, 0:OH, 0:OW], op0=np.multiply, operand0=w[:, 0:1],
                                     op1=np.add, operand1=b, dtype=nl.float32)
            for kh in nl.static_range(KH):
                for kw in nl.static_range(KW):
                    if kh != 0 or kw != 0:
                        t = kh * KW + kw
                        acc = nisa.scalar_tensor_tensor(data=padded[:, kh:kh + OH, kw:kw + OW], op0=np.multiply,
                                                        operand0=w[:, t:t + 1], op1=np.add, operand1=acc)
            nl.store(out[n, ct * CT:(ct + 1) * CT, :, :], value=acc)
    return out
