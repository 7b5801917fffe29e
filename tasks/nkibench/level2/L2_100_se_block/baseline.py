# L2_100 se_block: squeeze-and-excitation, as eager PyTorch runs it: six kernels, each from HBM to
# HBM (the spatial mean, fc1, relu, fc2, sigmoid, the per-(image, channel) rescale of x).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, pool


@nki.jit
def kernel(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    N, C, H, W = x.shape
    s = pool.global_avg_pool2d(x)                                    # x.mean(dim=(2, 3)): [N, C, 1, 1]
    h = elementwise.unary(linear.linear(s.reshape((N, C)), fc1_weight, fc1_bias), nl.relu)
    g = elementwise.unary(linear.linear(h, fc2_weight, fc2_bias), nl.sigmoid)      # [N, C]
    # x * g[:, :, None, None]: one scale per (image, channel), i.e. per channel of x seen as
    # [1, N*C, H, W]
    y = elementwise.channel_broadcast(x.reshape((1, N * C, H, W)), g.reshape((N * C,)), nl.multiply)
    return y.reshape((N, C, H, W))
