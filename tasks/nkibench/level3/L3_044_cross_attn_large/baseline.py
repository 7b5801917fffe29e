# L3_044 cross_attn_large: a cross-attention block, run as eager PyTorch runs it: one kernel per
# operation (LayerNorm, the q, k and v projections, the head splits, q @ k^T, the scale, softmax,
# @ v, the head merge, the output projection, the residual add), every intermediate written to HBM
# and read back by the next.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, elementwise, linear, norm, softmax


@nki.jit
def kernel(x, context, ln_weight, ln_bias, q_proj_weight, q_proj_bias, k_proj_weight, k_proj_bias,
           v_proj_weight, v_proj_bias, out_proj_weight, out_proj_bias):
    B, Sq, D = x.shape
    Skv = context.shape[1]
    H = 16
    Dh = D // H
    scale = 1.0 / math.sqrt(Dh)
    h = norm.layer_norm(x, ln_weight, ln_bias, eps=1e-5)                   # ln
    q = linear.linear(h, q_proj_weight, q_proj_bias)
    k = linear.linear(context, k_proj_weight, k_proj_bias)
    v = linear.linear(context, v_proj_weight, v_proj_bias)
    q = blocks_vision.swap12(q.reshape((B, Sq, H, Dh)))                     # view + transpose(1, 2)
    k = blocks_vision.swap12(k.reshape((B, Skv, H, Dh)))
    v = blocks_vision.swap12(v.reshape((B, Skv, H, Dh)))
    # softmax(q @ k^T * scale) @ v, one kernel each
    s = linear.bmm_nt(q, k)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))
    p = softmax.softmax(s)
    o = linear.bmm(p, v)                                                    # [B, H, S, Dh]
    # transpose(1, 2) + reshape
    o = blocks_vision.swap12(o).reshape((B, Sq, D))
    a = linear.linear(o, out_proj_weight, out_proj_bias)                   # out_proj
    return elementwise.binary(x, a, nl.add)                                 # residual
