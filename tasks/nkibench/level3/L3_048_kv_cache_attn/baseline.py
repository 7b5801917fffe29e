# L3_048 kv_cache_attn: single-token decode attention over a KV cache, run as eager PyTorch runs it:
# one kernel per operation (the caches' transpose(1, 2) made contiguous for the products, q @ k^T,
# the scale, softmax, @ v), every intermediate written to HBM and read back by the next. q's and the
# output's transpose(1, 2) only move a dimension of size 1: no data moves.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, elementwise, linear, softmax


@nki.jit
def kernel(q, k_cache, v_cache):
    B, L, H, D = k_cache.shape
    scale = 1.0 / math.sqrt(D)
    qh = q.reshape((B, H, 1, D))                                            # q.transpose(1, 2)
    k = blocks_vision.swap12(k_cache)                                       # [B, H, L, D]
    v = blocks_vision.swap12(v_cache)
    s = linear.bmm_nt(qh, k)                                                # [B, H, 1, L]
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))
    p = softmax.softmax(s)
    o = linear.bmm(p, v)                                                    # [B, H, 1, D]
    return o.reshape((B, 1, H, D))                                          # .transpose(1, 2)
