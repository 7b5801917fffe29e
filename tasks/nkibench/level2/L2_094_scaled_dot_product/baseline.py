# L2_094 scaled_dot_product: q @ k^T / sqrt(64), as eager PyTorch runs it: the batched product
# (HBM out), then the division by 8 (HBM in, HBM out).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(q, k):
    scores = linear.bmm_nt(q, k)                                          # q @ k.transpose(-2, -1)
    return elementwise.unary(scores, lambda t: nl.divide(t, math.sqrt(64)))
