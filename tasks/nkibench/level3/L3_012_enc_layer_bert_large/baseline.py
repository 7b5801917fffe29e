# L3_012 enc_layer_bert_large: pre-norm encoder layer (16 heads), the way eager PyTorch runs it:
# one kernel per op, each intermediate in HBM: LayerNorm, the q, k, v projections, the split into
# heads, q @ k^T, the scale, the softmax, @ v, the merge, the output projection, the residual
# add; LayerNorm, fc1, the exact GELU, fc2, the residual add (dropout is the identity in eval
# mode and has no kernel).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import blocks_seq, elementwise, linear, norm, softmax


@nki.jit
def kernel(x, ln1_weight, ln1_bias, ln2_weight, ln2_bias, q_proj_weight, q_proj_bias,
           k_proj_weight, k_proj_bias, v_proj_weight, v_proj_bias, out_proj_weight, out_proj_bias,
           fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    scale = 1.0 / math.sqrt(x.shape[-1] // 16)
    h = norm.layer_norm(x, ln1_weight, ln1_bias, eps=1e-5)      # self.ln1(x)
    q = linear.linear(h, q_proj_weight, q_proj_bias)            # self.q_proj(h)
    k = linear.linear(h, k_proj_weight, k_proj_bias)            # self.k_proj(h)
    v = linear.linear(h, v_proj_weight, v_proj_bias)            # self.v_proj(h)
    qh = blocks_seq.split_heads(q, 16)                          # .view(B, S, H, Dh).transpose(1,2)
    kh = blocks_seq.split_heads(k, 16)                          # (contiguous)
    vh = blocks_seq.split_heads(v, 16)
    s = linear.bmm_nt(qh, kh)                                   # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))   # * 1/sqrt(Dh)
    p = softmax.softmax(s)                                      # softmax(dim=-1)
    o = linear.bmm(p, vh)                                       # @ v
    a = blocks_seq.merge_heads(o)                               # .transpose(1, 2)...view(B, S, D)
    y = linear.linear(a, out_proj_weight, out_proj_bias)        # self.out_proj(a)
    x = elementwise.binary(x, y, nl.add)                        # x + ...
    h = norm.layer_norm(x, ln2_weight, ln2_bias, eps=1e-5)      # self.ln2(x)
    h = linear.linear(h, fc1_weight, fc1_bias)                  # self.fc1(h)
    h = elementwise.unary(h, nl.gelu)                           # F.gelu(h)
    y = linear.linear(h, fc2_weight, fc2_bias)                  # self.fc2(h)
    return elementwise.binary(x, y, nl.add)                     # x + ...
