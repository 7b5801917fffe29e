# L2_074 weighted_residual: alpha * x + (1 - alpha) * linear(x), alpha a learned 0-d parameter, the
# way eager PyTorch runs it: five kernels, each reading its inputs from HBM and writing its result
# to HBM (alpha * x, 1 - alpha, the linear with its bias, the scaled branch, the sum).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, residual


@nki.jit
def kernel(x, alpha, linear_weight, linear_bias):
    ax = residual.scalar_broadcast(x, alpha, nl.multiply)              # alpha * x       -> HBM
    beta = residual.scalar_unary(alpha, lambda t: nl.subtract(1.0, t))  # 1 - alpha       -> HBM
    y = linear.linear(x, linear_weight, linear_bias)                   # self.linear(x)  -> HBM
    by = residual.scalar_broadcast(y, beta, nl.multiply)               # (1 - alpha) * y -> HBM
    return elementwise.binary(ax, by, nl.add)                          # ax + by         -> HBM
