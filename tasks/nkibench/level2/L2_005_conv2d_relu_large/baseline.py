# L2_005 conv2d_relu_large: relu(Conv2d(3, 64, k=7, s=2, p=3)(x) + bias[c]), run as eager PyTorch
# runs it: one kernel per operation (the convolution with its own bias, the extra-bias add, the
# ReLU), each intermediate written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import conv, elementwise


@nki.jit
def kernel(x, conv_weight, conv_bias, bias):
    y = conv.conv2d(x, conv_weight, conv_bias, stride=2, padding=3)
    y = elementwise.channel_broadcast(y, bias, nl.add)
    return elementwise.unary(y, nl.relu)
