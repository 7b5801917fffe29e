# L3_045 swin_window_attn: Swin window attention, run as eager PyTorch runs it: one kernel per
# operation (LayerNorm, the window partition, the qkv projection, the head split, q @ k^T, the
# scale, softmax, @ v, the head merge, the projection, the window merge, the residual add), every
# intermediate written to HBM and read back by the next.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, elementwise, linear, norm, softmax


@nki.jit
def kernel(x, ln_weight, ln_bias, qkv_weight, qkv_bias, proj_weight, proj_bias):
    B, Hh, Ww, C = x.shape
    ws = 7
    nH, nW = Hh // ws, Ww // ws
    Bw = B * nH * nW
    heads = 8
    scale = 1.0 / math.sqrt(C // heads)
    h = norm.layer_norm(x, ln_weight, ln_bias, eps=1e-5)                   # ln
    # view(B, nH, ws, nW, ws, C).permute(0, 1, 3, 2, 4, 5): dims 1 and 2 of [B*nH, ws, nW, ws*C]
    win = blocks_vision.swap12(h.reshape((B * nH, ws, nW, ws * C))).reshape((Bw, ws * ws, C))
    qkv = linear.linear(win, qkv_weight, qkv_bias)                         # [Bw, 49, 3C]
    q, k, v = blocks_vision.split_qkv(qkv, heads)                           # [Bw, heads, 49, 32]
    # softmax(q @ k^T * scale) @ v, one kernel each
    s = linear.bmm_nt(q, k)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))
    p = softmax.softmax(s)
    o = linear.bmm(p, v)                                                    # [B, H, S, Dh]
    # transpose(1, 2) + reshape
    o = blocks_vision.swap12(o).reshape((Bw, ws * ws, C))
    o = linear.linear(o, proj_weight, proj_bias)                           # proj
    # view(B, nH, nW, ws, ws, C).permute(0, 1, 3, 2, 4, 5): dims 1 and 2 of [B*nH, nW, ws, ws*C]
    o = blocks_vision.swap12(o.reshape((B * nH, nW, ws, ws * C))).reshape((B, Hh, Ww, C))
    return elementwise.binary(o, x, nl.add)                                 # + residual
