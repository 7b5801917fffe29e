# L2_082 dw_sep_conv_s2: depthwise-separable convolution 64 -> 128: relu(BN2(pointwise(relu(BN1(
# depthwise(x)))))), depthwise = Conv2d(k=3, s=2, p=1, groups=64), pointwise = 1x1 Conv2d, BatchNorm in
# eval mode. Run as eager PyTorch runs it: one kernel per operation (six), each intermediate
# written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise


@nki.jit
def kernel(x, depthwise_weight, depthwise_bias, pointwise_weight, pointwise_bias,
           bn1_weight, bn1_bias, bn1_running_mean, bn1_running_var,
           bn2_weight, bn2_bias, bn2_running_mean, bn2_running_var):
    y = conv.conv2d(x, depthwise_weight, depthwise_bias, stride=2, padding=1, groups=64)
    y = channel_norm.batch_norm2d(y, bn1_weight, bn1_bias, bn1_running_mean, bn1_running_var)
    y = elementwise.unary(y, nl.relu)
    y = conv.conv2d(y, pointwise_weight, pointwise_bias)
    y = channel_norm.batch_norm2d(y, bn2_weight, bn2_bias, bn2_running_mean, bn2_running_var)
    return elementwise.unary(y, nl.relu)
