# L2_071 residual_double_linear: x + f(x), f = Linear(768, 768) -> ReLU -> Linear(768, 768), the way
# eager PyTorch runs it: four kernels, each reading its inputs from HBM and writing its result to
# HBM (linear with bias, relu, linear with bias, the residual add).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, f_0_weight, f_0_bias, f_2_weight, f_2_bias):
    h = linear.linear(x, f_0_weight, f_0_bias)           # self.f[0](x)  -> HBM
    r = elementwise.unary(h, nl.relu)                    # self.f[1](h)  -> HBM
    y = linear.linear(r, f_2_weight, f_2_bias)           # self.f[2](r)  -> HBM
    return elementwise.binary(x, y, nl.add)              # x + y         -> HBM
