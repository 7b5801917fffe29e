# L2_002 conv2d_relu_k1: relu(Conv2d(128, 256, k=1, s=1, p=0)(x) + bias[c]), run as eager PyTorch
# runs it: one kernel per operation (the convolution with its own bias, the extra-bias add, the
# ReLU), each intermediate written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import conv, elementwise


@nki.jit
def kernel(x, conv_weight, conv_bias, bias):
    y = conv.conv2d(x, conv_weight, conv_bias, stride=1, padding=0)
    y = elementwise.channel_broadcast(y, bias, nl.add)
    return elementwise.unary(y, nl.relu)
