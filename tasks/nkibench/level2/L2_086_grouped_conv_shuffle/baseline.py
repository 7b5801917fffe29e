# L2_086 grouped_conv_shuffle: relu(BatchNorm2d(Conv2d(128, 128, 1, groups=4)(x))) and a channel
# shuffle over 4 groups (view [B, 4, 32, H, W], transpose(1, 2), contiguous), BatchNorm in eval mode.
# Run as eager PyTorch runs it: one kernel per operation (the grouped convolution, BatchNorm, ReLU,
# the contiguous copy of the shuffled view), each intermediate written to HBM and read back.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise, shuffle


@nki.jit
def kernel(x, conv_weight, conv_bias, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    y = conv.conv2d(x, conv_weight, conv_bias, groups=4)
    y = channel_norm.batch_norm2d(y, bn_weight, bn_bias, bn_running_mean, bn_running_var)
    y = elementwise.unary(y, nl.relu)
    return shuffle.channel_shuffle(y, 4)
