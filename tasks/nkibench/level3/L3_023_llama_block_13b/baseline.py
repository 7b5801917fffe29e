# L3_023 llama_block_13b: LLaMA block (40 query / 40 key-value heads), the way eager PyTorch runs
# it: one kernel per op, each intermediate in HBM: RMSNorm, the q, k, v projections, the split
# into heads (made contiguous), q @ k^T, the scale, the causal fill of -inf, the softmax, @ v,
# the merge, o_proj, the residual add; RMSNorm, gate, SiLU, up, the product, down, the residual
# add.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import attention, blocks_seq, elementwise, linear, norm, softmax


@nki.jit
def kernel(x, attn_norm_weight, ffn_norm_weight, q_proj_weight, k_proj_weight, v_proj_weight,
           o_proj_weight, gate_weight, up_weight, down_weight):
    scale = 1.0 / math.sqrt(q_proj_weight.shape[0] // 40)
    n = norm.rms_norm(x, attn_norm_weight, eps=1e-6)            # self.attn_norm(x)
    q = linear.linear(n, q_proj_weight)                         # self.q_proj(n)
    k = linear.linear(n, k_proj_weight)                         # self.k_proj(n)
    v = linear.linear(n, v_proj_weight)                         # self.v_proj(n)
    qh = blocks_seq.split_heads(q, 40)                          # .view(B, S, H, Dh).transpose(1,2)
    kh = blocks_seq.split_heads(k, 40)                          # (contiguous)
    vh = blocks_seq.split_heads(v, 40)
    s = linear.bmm_nt(qh, kh)                                   # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))   # * 1/sqrt(Dh)
    s = attention.causal_fill(s)                                # masked_fill(triu(1), -inf)
    p = softmax.softmax(s)                                      # softmax(dim=-1)
    o = linear.bmm(p, vh)                                       # @ v
    a = blocks_seq.merge_heads(o)                               # .transpose(1, 2)...view(B, S, -1)
    y = linear.linear(a, o_proj_weight)                         # self.o_proj(a)
    x = elementwise.binary(x, y, nl.add)                        # x + ...
    m = norm.rms_norm(x, ffn_norm_weight, eps=1e-6)             # self.ffn_norm(x)
    g = linear.linear(m, gate_weight)                           # self.gate(m)
    g = elementwise.unary(g, nl.silu)                           # F.silu(g)
    u = linear.linear(m, up_weight)                             # self.up(m)
    p = elementwise.binary(g, u, nl.multiply)                   # silu(g) * u
    y = linear.linear(p, down_weight)                           # self.down(p)
    return elementwise.binary(x, y, nl.add)                     # x + ...
