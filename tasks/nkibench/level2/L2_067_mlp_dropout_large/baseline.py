# L2_067 mlp_dropout_large: fc2(dropout(gelu(fc1(x)))), the way eager PyTorch runs it in eval mode:
# Dropout is the identity there (no kernel), so three kernels, each reading its input from HBM and
# writing its result to HBM (nn.Linear with its bias, the exact (erf) GELU nl.gelu, nn.Linear).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    h = linear.linear(x, fc1_weight, fc1_bias)           # self.fc1(x)              -> HBM
    g = elementwise.unary(h, nl.gelu)                    # F.gelu(h); dropout: eval -> HBM
    return linear.linear(g, fc2_weight, fc2_bias)        # self.fc2(g)              -> HBM
