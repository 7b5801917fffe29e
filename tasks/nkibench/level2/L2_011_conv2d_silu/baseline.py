# L2_011 conv2d_silu: y * sigmoid(y), y = Conv2d(64, 64, k=3, s=1, p=1)(x): the convolution,
# torch.sigmoid, and the product.
# Run as eager PyTorch runs it: one kernel per operation, each intermediate written to HBM and
# read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import conv, elementwise


@nki.jit
def kernel(x, conv_weight, conv_bias):
    y = conv.conv2d(x, conv_weight, conv_bias, stride=1, padding=1)
    s = elementwise.unary(y, nl.sigmoid)
    return elementwise.binary(y, s, nl.multiply)
