# L3_030 mobilenet_ir_s2: a MobileNetV2 inverted residual block (expand 1x1, depthwise 3x3 stride 2,
# project 1x1), run as eager PyTorch runs it: one kernel per operation (each convolution, each
# BatchNorm, each ReLU6), every intermediate written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise


def _relu6(t):
    return nl.minimum(nl.maximum(t, 0.0), 6.0)


@nki.jit
def kernel(x, expand_conv_weight, expand_bn_weight, expand_bn_bias, expand_bn_running_mean,
           expand_bn_running_var, dw_conv_weight, dw_bn_weight, dw_bn_bias, dw_bn_running_mean,
           dw_bn_running_var, project_conv_weight, project_bn_weight, project_bn_bias,
           project_bn_running_mean, project_bn_running_var):
    out = conv.conv2d(x, expand_conv_weight)                                     # expand (1x1)
    out = channel_norm.batch_norm2d(out, expand_bn_weight, expand_bn_bias, expand_bn_running_mean,
                                    expand_bn_running_var)
    out = elementwise.unary(out, _relu6)
    out = conv.conv2d(out, dw_conv_weight, stride=2, padding=1, groups=144)        # depthwise 3x3
    out = channel_norm.batch_norm2d(out, dw_bn_weight, dw_bn_bias, dw_bn_running_mean,
                                    dw_bn_running_var)
    out = elementwise.unary(out, _relu6)
    out = conv.conv2d(out, project_conv_weight)                                  # project (1x1)
    out = channel_norm.batch_norm2d(out, project_bn_weight, project_bn_bias,
                                    project_bn_running_mean, project_bn_running_var)
    return out
