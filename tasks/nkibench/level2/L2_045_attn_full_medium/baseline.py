# L2_045 attn_full_medium: softmax(q @ k^T * scale + mask) @ v, the way eager PyTorch runs it: five
# kernels, each intermediate in HBM: the scores q @ k^T, the scale, the mask's broadcast add, the
# softmax, the product with v.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import attention, elementwise, linear, softmax


@nki.jit
def kernel(q, k, v, mask):
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = linear.bmm_nt(q, k)                                          # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))        # * scale
    s = attention.add_mask(s, mask)                                  # + mask (broadcast)
    p = softmax.softmax(s)                                           # softmax(dim=-1)
    return linear.bmm(p, v)                                          # @ v
