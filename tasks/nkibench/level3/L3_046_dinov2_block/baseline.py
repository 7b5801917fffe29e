# L3_046 dinov2_block: a DINOv2 (layer-scaled) ViT block, run as eager PyTorch runs it: one kernel
# per operation (LayerNorm, the qkv projection, the head split, q @ k^T, the scale, softmax, @ v,
# the head merge, the output projection, the layer scale, the residual add, LayerNorm, fc1, GELU,
# fc2, the layer scale, the residual add), every intermediate written to HBM and read back by the
# next.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, elementwise, linear, norm, softmax


@nki.jit
def kernel(x, ls1, ls2, ln1_weight, ln1_bias, qkv_weight, qkv_bias, attn_out_weight, attn_out_bias,
           ln2_weight, ln2_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    B, S, D = x.shape
    H = 12
    scale = 1.0 / math.sqrt(D // H)
    h = norm.layer_norm(x, ln1_weight, ln1_bias, eps=1e-5)                 # ln1
    qkv = linear.linear(h, qkv_weight, qkv_bias)                           # [B, S, 3D]
    q, k, v = blocks_vision.split_qkv(qkv, H)                               # reshape + permute
    # softmax(q @ k^T * scale) @ v, one kernel each
    s = linear.bmm_nt(q, k)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))
    p = softmax.softmax(s)
    o = linear.bmm(p, v)                                                    # [B, H, S, Dh]
    # transpose(1, 2) + reshape
    o = blocks_vision.swap12(o).reshape((B, S, D))
    a = linear.linear(o, attn_out_weight, attn_out_bias)                   # attn_out
    a = elementwise.row_broadcast(a, ls1, nl.multiply)                      # ls1 *
    x1 = elementwise.binary(x, a, nl.add)                                   # residual
    h = norm.layer_norm(x1, ln2_weight, ln2_bias, eps=1e-5)                # ln2
    h = linear.linear(h, fc1_weight, fc1_bias)                             # fc1
    h = elementwise.unary(h, nl.gelu)                                      # exact GELU
    f = linear.linear(h, fc2_weight, fc2_bias)                             # fc2
    f = elementwise.row_broadcast(f, ls2, nl.multiply)                      # ls2 *
    return elementwise.binary(x1, f, nl.add)                                # residual
