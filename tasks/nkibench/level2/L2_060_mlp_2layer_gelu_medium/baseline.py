# L2_060 mlp_2layer_gelu_medium: fc2(gelu(fc1(x))), the way eager PyTorch runs it: three kernels,
# each reading its input from HBM and writing its result to HBM (nn.Linear with its bias, the exact
# (erf) GELU nl.gelu, nn.Linear).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    h = linear.linear(x, fc1_weight, fc1_bias)           # self.fc1(x)   -> HBM
    g = elementwise.unary(h, nl.gelu)                    # F.gelu(h)     -> HBM
    return linear.linear(g, fc2_weight, fc2_bias)        # self.fc2(g)   -> HBM
