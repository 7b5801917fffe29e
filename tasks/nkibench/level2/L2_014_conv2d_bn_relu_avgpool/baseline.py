# L2_014 conv2d_bn_relu_avgpool: global average pool of relu(BatchNorm2d(Conv2d(512, 512, k=3, s=1, p=1,
# no bias)(x))), BatchNorm in eval mode: the convolution, BatchNorm, ReLU, AdaptiveAvgPool2d((1, 1)).
# Run as eager PyTorch runs it: one kernel per operation, each intermediate written to HBM and
# read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise, pool


@nki.jit
def kernel(x, conv_weight, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    y = conv.conv2d(x, conv_weight, None, stride=1, padding=1)
    y = channel_norm.batch_norm2d(y, bn_weight, bn_bias, bn_running_mean, bn_running_var)
    y = elementwise.unary(y, nl.relu)
    return pool.global_avg_pool2d(y)
