# L2_057 gqa_large: grouped-query attention, the way eager PyTorch runs it: k and v are
# repeated to the query heads (one kernel each), then the attention's math op by op, each
# intermediate in HBM: the scores q @ k^T, the scale 1/sqrt(d), the softmax, the product with v.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import attention, elementwise, linear, softmax


@nki.jit
def kernel(q, k, v):
    n_rep = q.shape[1] // k.shape[1]
    scale = 1.0 / math.sqrt(q.shape[-1])
    k = attention.repeat_kv(k, n_rep)                                # k.repeat_interleave(n_rep, 1)
    v = attention.repeat_kv(v, n_rep)                                # v.repeat_interleave(n_rep, 1)
    s = linear.bmm_nt(q, k)                                          # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))        # * scale
    p = softmax.softmax(s)                                           # softmax(dim=-1)
    return linear.bmm(p, v)                                          # @ v
