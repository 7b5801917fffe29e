# L3_004 mlp_3layer_bottleneck_1024: x + fc3(gelu(fc2(gelu(fc1(LayerNorm(x)))))), the way eager
# PyTorch runs it: seven kernels, each reading its inputs from HBM and writing its result to HBM
# (LayerNorm eps 1e-5 with its affine, three nn.Linear with their biases, two exact (erf) GELUs,
# the residual add; dropout is the identity in eval mode and has no kernel).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, norm


@nki.jit
def kernel(x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, fc3_weight,
           fc3_bias):
    n = norm.layer_norm(x, ln_weight, ln_bias, eps=1e-5)        # self.ln(x)
    h = linear.linear(n, fc1_weight, fc1_bias)                  # self.fc1(n)
    h = elementwise.unary(h, nl.gelu)                           # F.gelu
    h = linear.linear(h, fc2_weight, fc2_bias)                  # self.fc2(h)
    h = elementwise.unary(h, nl.gelu)                           # F.gelu
    y = linear.linear(h, fc3_weight, fc3_bias)                  # self.fc3(h)
    return elementwise.binary(y, x, nl.add)                     # h + residual
