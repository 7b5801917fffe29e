# L3_018 gpt2_block_medium: GPT-2 block (16 heads), the way eager PyTorch runs it: one kernel per
# op, each intermediate in HBM: LayerNorm, the fused QKV projection, its q, k and v split into
# heads (made contiguous), q @ k^T, the scale, the causal fill of -inf, the softmax, @ v, the
# merge, the output projection, the residual add; LayerNorm, fc1, the exact GELU, fc2, the
# residual add (dropout is the identity in eval mode and has no kernel).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import attention, blocks_seq, elementwise, linear, norm, softmax


@nki.jit
def kernel(x, ln1_weight, ln1_bias, ln2_weight, ln2_bias, attn_qkv_weight, attn_qkv_bias,
           attn_out_weight, attn_out_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    scale = 1.0 / math.sqrt(x.shape[-1] // 16)
    h = norm.layer_norm(x, ln1_weight, ln1_bias, eps=1e-5)      # self.ln1(x)
    qkv = linear.linear(h, attn_qkv_weight, attn_qkv_bias)      # self.attn_qkv(h)
    qh = blocks_seq.split_heads(qkv, 16, 0, 3)                  # qkv.reshape(B, S, 3, H, Dh)...[0]
    kh = blocks_seq.split_heads(qkv, 16, 1, 3)                  # [1]
    vh = blocks_seq.split_heads(qkv, 16, 2, 3)                  # [2]
    s = linear.bmm_nt(qh, kh)                                   # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))   # * 1/sqrt(Dh)
    s = attention.causal_fill(s)                                # masked_fill(triu(1), -inf)
    p = softmax.softmax(s)                                      # softmax(dim=-1)
    o = linear.bmm(p, vh)                                       # @ v
    a = blocks_seq.merge_heads(o)                               # .transpose(1, 2)...view(B, S, D)
    y = linear.linear(a, attn_out_weight, attn_out_bias)        # self.attn_out(a)
    x = elementwise.binary(x, y, nl.add)                        # x + ...
    h = norm.layer_norm(x, ln2_weight, ln2_bias, eps=1e-5)      # self.ln2(x)
    h = linear.linear(h, fc1_weight, fc1_bias)                  # self.fc1(h)
    h = elementwise.unary(h, nl.gelu)                           # F.gelu(h)
    y = linear.linear(h, fc2_weight, fc2_bias)                  # self.fc2(h)
    return elementwise.binary(x, y, nl.add)                     # x + ...
