# L3_002 mlp_2layer_1024: x + fc2(gelu(fc1(LayerNorm(x)))), the way eager PyTorch runs it: five
# kernels, each reading its inputs from HBM and writing its result to HBM (LayerNorm eps 1e-5
# with its affine, nn.Linear with its bias, the exact (erf) GELU nl.gelu, nn.Linear, the residual
# add; dropout is the identity in eval mode and has no kernel).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, norm


@nki.jit
def kernel(x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    n = norm.layer_norm(x, ln_weight, ln_bias, eps=1e-5)        # self.ln(x)
    h = linear.linear(n, fc1_weight, fc1_bias)                  # self.fc1(n)
    g = elementwise.unary(h, nl.gelu)                           # F.gelu(h)
    y = linear.linear(g, fc2_weight, fc2_bias)                  # self.fc2(g)
    return elementwise.binary(y, x, nl.add)                     # h + residual
