# L2_010 conv2d_bn_relu_first: relu(BatchNorm2d(Conv2d(3, 64, k=7, s=2, p=3, no bias)(x))), BatchNorm in
# eval mode, run as eager PyTorch runs it: one kernel per operation (convolution, BatchNorm, ReLU),
# each intermediate written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise


@nki.jit
def kernel(x, conv_weight, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    y = conv.conv2d(x, conv_weight, None, stride=2, padding=3)
    y = channel_norm.batch_norm2d(y, bn_weight, bn_bias, bn_running_mean, bn_running_var)
    return elementwise.unary(y, nl.relu)
