# L2_012 conv2d_gelu: gelu(Conv2d(128, 128, k=3, s=1, p=1)(x)): the convolution and the
# (exact) gelu.
# Run as eager PyTorch runs it: one kernel per operation, each intermediate written to HBM and
# read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import conv, elementwise


@nki.jit
def kernel(x, conv_weight, conv_bias):
    y = conv.conv2d(x, conv_weight, conv_bias, stride=1, padding=1)
    return elementwise.unary(y, nl.gelu)     # nl.gelu is the exact (erf) form, F.gelu's default
