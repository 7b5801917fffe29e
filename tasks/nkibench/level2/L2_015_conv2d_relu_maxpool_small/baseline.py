# L2_015 conv2d_relu_maxpool_small: MaxPool2d(k=2, s=2, p=1)(relu(Conv2d(64, 64, k=3, s=1, p=1)(x))):
# the convolution, ReLU, and the max pooling (padding -inf).
# Run as eager PyTorch runs it: one kernel per operation, each intermediate written to HBM and
# read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import conv, elementwise, pool


@nki.jit
def kernel(x, conv_weight, conv_bias):
    y = conv.conv2d(x, conv_weight, conv_bias, stride=1, padding=1)
    y = elementwise.unary(y, nl.relu)
    return pool.max_pool2d(y, 2, stride=2, padding=1)
