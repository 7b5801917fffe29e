# L2_091 linear_ln_small: LayerNorm(Linear(x)), as eager PyTorch runs it: the linear with its bias (HBM
# out), then the LayerNorm (HBM in, HBM out).
import neuronxcc.nki as nki
from nkibench_ops import linear, norm


@nki.jit
def kernel(x, linear_weight, linear_bias, ln_weight, ln_bias):
    h = linear.linear(x, linear_weight, linear_bias)           # self.linear(x)
    return norm.layer_norm(h, ln_weight, ln_bias, eps=1e-5)    # self.ln(.)
