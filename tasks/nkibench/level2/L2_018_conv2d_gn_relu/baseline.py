# L2_018 conv2d_gn_relu: relu(GroupNorm(32, 256)(Conv2d(256, 256, k=3, s=1, p=1, no bias)(x))): the
# convolution, GroupNorm, ReLU.
# Run as eager PyTorch runs it: one kernel per operation, each intermediate written to HBM and
# read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise


@nki.jit
def kernel(x, conv_weight, gn_weight, gn_bias):
    y = conv.conv2d(x, conv_weight, None, stride=1, padding=1)
    y = channel_norm.group_norm(y, 32, gn_weight, gn_bias)
    return elementwise.unary(y, nl.relu)
