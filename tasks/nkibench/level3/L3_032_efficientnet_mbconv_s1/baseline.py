# L3_032 efficientnet_mbconv_s1: an EfficientNet MBConv block (depthwise 3x3 stride 1,
# squeeze-and-excitation, project 1x1), run as eager PyTorch runs it: one kernel per operation (each
# convolution, BatchNorm and SiLU, the SE block's pool, convolutions, activations and rescale),
# every intermediate written to HBM and read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import channel_norm, conv, elementwise, pool


@nki.jit
def kernel(x, dw_conv_weight, dw_bn_weight, dw_bn_bias, dw_bn_running_mean, dw_bn_running_var,
           se_reduce_weight, se_reduce_bias, se_expand_weight, se_expand_bias, project_conv_weight,
           project_bn_weight, project_bn_bias, project_bn_running_mean, project_bn_running_var):
    out = conv.conv2d(x, dw_conv_weight, stride=1, padding=1, groups=32)          # depthwise
    out = channel_norm.batch_norm2d(out, dw_bn_weight, dw_bn_bias, dw_bn_running_mean,
                                    dw_bn_running_var)
    out = elementwise.unary(out, nl.silu)
    N, C, H, W = out.shape
    se = pool.global_avg_pool2d(out)                                             # [N, C, 1, 1]
    se = conv.conv2d(se, se_reduce_weight, se_reduce_bias)                       # SE reduce (1x1)
    se = elementwise.unary(se, nl.silu)
    se = conv.conv2d(se, se_expand_weight, se_expand_bias)                       # SE expand (1x1)
    se = elementwise.unary(se, nl.sigmoid)
    # out * se: one scale per (image, channel), i.e. per channel of out seen as [1, N*C, H, W]
    out = elementwise.channel_broadcast(out.reshape((1, N * C, H, W)), se.reshape((N * C,)),
                                        nl.multiply).reshape((N, C, H, W))
    out = conv.conv2d(out, project_conv_weight)                                  # project (1x1)
    return channel_norm.batch_norm2d(out, project_bn_weight, project_bn_bias,
                                     project_bn_running_mean, project_bn_running_var)
