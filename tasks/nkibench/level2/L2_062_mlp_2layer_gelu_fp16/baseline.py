# L2_062 mlp_2layer_gelu_fp16: fc2(gelu(fc1(x))) in float16, the way eager PyTorch runs it: three
# kernels, each reading its input from HBM and writing its float16 result to HBM. The linears
# accumulate in float32 in PSUM, add the bias and round once to float16; the exact (erf) GELU
# nl.gelu computes on the float16 values and rounds its result to float16.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    h = linear.linear(x, fc1_weight, fc1_bias)           # self.fc1(x)   -> HBM (float16)
    g = elementwise.unary(h, nl.gelu)                    # F.gelu(h)     -> HBM (float16)
    return linear.linear(g, fc2_weight, fc2_bias)        # self.fc2(g)   -> HBM (float16)
