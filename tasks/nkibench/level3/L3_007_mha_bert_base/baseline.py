# L3_007 mha_bert_base: multi-head self-attention (12 heads), the way eager PyTorch runs it: one
# kernel per op, each intermediate in HBM: the q, k, v projections (bias-free nn.Linear), the
# split into heads made contiguous, the scores q @ k^T, the scale 1/sqrt(Dh), the softmax, the
# product with v, the merge of the heads, the output projection.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import blocks_seq, elementwise, linear, softmax


@nki.jit
def kernel(x, q_proj_weight, k_proj_weight, v_proj_weight, out_proj_weight):
    scale = 1.0 / math.sqrt(x.shape[-1] // 12)
    q = linear.linear(x, q_proj_weight)                         # self.q_proj(x)
    k = linear.linear(x, k_proj_weight)                         # self.k_proj(x)
    v = linear.linear(x, v_proj_weight)                         # self.v_proj(x)
    qh = blocks_seq.split_heads(q, 12)                          # .view(B, S, H, Dh).transpose(1,2)
    kh = blocks_seq.split_heads(k, 12)                          # (contiguous)
    vh = blocks_seq.split_heads(v, 12)
    s = linear.bmm_nt(qh, kh)                                   # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))   # * 1/sqrt(Dh)
    p = softmax.softmax(s)                                      # softmax(dim=-1)
    o = linear.bmm(p, vh)                                       # @ v
    a = blocks_seq.merge_heads(o)                               # .transpose(1, 2)...view(B, S, D)
    return linear.linear(a, out_proj_weight)                    # self.out_proj(a)
