# L3_049 mqa_block: multi-query attention, run as eager PyTorch runs it: one kernel per operation
# (the q, k and v projections, the query head split, the single key / value head broadcast to the 16
# query heads, q @ k^T, the scale, softmax, @ v, the head merge, the output projection), every
# intermediate written to HBM and read back by the next.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import attention, blocks_vision, elementwise, linear, softmax


@nki.jit
def kernel(x, q_proj_weight, k_proj_weight, v_proj_weight, out_proj_weight):
    B, S, D = x.shape
    Dh = k_proj_weight.shape[0]
    H = D // Dh
    scale = 1.0 / math.sqrt(Dh)
    q = linear.linear(x, q_proj_weight)
    k = linear.linear(x, k_proj_weight)                                     # [B, S, 64]: one head
    v = linear.linear(x, v_proj_weight)
    q = blocks_vision.swap12(q.reshape((B, S, H, Dh)))                      # [B, 16, S, 64]
    k = attention.repeat_kv(k.reshape((B, 1, S, Dh)), H)                    # expand to 16 heads
    v = attention.repeat_kv(v.reshape((B, 1, S, Dh)), H)
    # softmax(q @ k^T * scale) @ v, one kernel each
    s = linear.bmm_nt(q, k)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))
    p = softmax.softmax(s)
    o = linear.bmm(p, v)                                                    # [B, H, S, Dh]
    # transpose(1, 2) + reshape
    o = blocks_vision.swap12(o).reshape((B, S, D))
    return linear.linear(o, out_proj_weight)                                # out_proj
