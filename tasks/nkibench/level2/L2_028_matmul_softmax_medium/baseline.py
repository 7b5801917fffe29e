# L2_028 matmul_softmax_medium: softmax(q @ k^T / sqrt(d)), the way eager PyTorch runs it: three kernels,
# each intermediate in HBM: the scores q @ k^T, their division by sqrt(d), the softmax.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, softmax


@nki.jit
def kernel(q, k):
    d = q.shape[-1]
    s = linear.bmm_nt(q, k)                                          # q @ k.transpose(-2, -1)
    s = elementwise.unary(s, lambda t: nl.divide(t, math.sqrt(d)))   # / math.sqrt(d)
    return softmax.softmax(s)                                        # softmax(dim=-1)
