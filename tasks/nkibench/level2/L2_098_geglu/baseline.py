# L2_098 geglu: F.gelu(w1(x)) * w2(x), as eager PyTorch runs it: four kernels, each from HBM to
# HBM (the first linear, its activation, the second linear, the product).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, w1_weight, w2_weight):
    a = elementwise.unary(linear.linear(x, w1_weight), nl.gelu)      # F.gelu(self.w1(x))
    b = linear.linear(x, w2_weight)                                 # self.w2(x)
    return elementwise.binary(a, b, nl.multiply)
