# L3_027 resnet_bottleneck_large: a ResNet bottleneck block (stride 1), run as eager
# PyTorch runs it: one kernel per operation (each convolution, each BatchNorm, each ReLU, the
# residual add), every intermediate written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise


@nki.jit
def kernel(x, conv1_weight, bn1_weight, bn1_bias, bn1_running_mean, bn1_running_var, conv2_weight,
           bn2_weight, bn2_bias, bn2_running_mean, bn2_running_var, conv3_weight, bn3_weight,
           bn3_bias, bn3_running_mean, bn3_running_var):
    out = conv.conv2d(x, conv1_weight)                                           # conv1 (1x1)
    out = channel_norm.batch_norm2d(out, bn1_weight, bn1_bias, bn1_running_mean, bn1_running_var)
    out = elementwise.unary(out, nl.relu)
    out = conv.conv2d(out, conv2_weight, stride=1, padding=1)                       # conv2 (3x3)
    out = channel_norm.batch_norm2d(out, bn2_weight, bn2_bias, bn2_running_mean, bn2_running_var)
    out = elementwise.unary(out, nl.relu)
    out = conv.conv2d(out, conv3_weight)                                         # conv3 (1x1)
    out = channel_norm.batch_norm2d(out, bn3_weight, bn3_bias, bn3_running_mean, bn3_running_var)
    identity = x
    out = elementwise.binary(out, identity, nl.add)                               # + identity
    return elementwise.unary(out, nl.relu)
