# L2_054 attn_dropout_small: softmax(q @ k^T / sqrt(d)) @ v with dropout (eval mode: the identity, no
# kernel), the way eager PyTorch runs it: four kernels, each intermediate in HBM: the scores
# q @ k^T, their division by sqrt(d), the softmax, the product with v.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, softmax


@nki.jit
def kernel(q, k, v):
    d = q.shape[-1]
    s = linear.bmm_nt(q, k)                                          # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.divide(t, math.sqrt(d)))   # / math.sqrt(d)
    p = softmax.softmax(s)                                           # softmax(dim=-1)
    return linear.bmm(p, v)                                          # dropout (eval: identity); @ v
