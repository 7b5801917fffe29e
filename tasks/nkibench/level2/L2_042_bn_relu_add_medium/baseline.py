# L2_042 bn_relu_add_medium: relu(BN(x) + residual), as eager PyTorch runs it: three kernels, each from HBM to
# HBM (the eval-mode BatchNorm, the residual add, the relu).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import channel_norm, elementwise


@nki.jit
def kernel(x, residual, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    y = channel_norm.batch_norm2d(x, bn_weight, bn_bias, bn_running_mean, bn_running_var, eps=1e-5)
    s = elementwise.binary(y, residual, nl.add)       # bn(x) + residual
    return elementwise.unary(s, nl.relu)
