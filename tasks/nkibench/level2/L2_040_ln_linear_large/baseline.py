# L2_040 ln_linear_large: Linear(LayerNorm(x)), as eager PyTorch runs it: the LayerNorm (HBM out),
# then the linear with its bias (HBM in, HBM out).
import neuronxcc.nki as nki
from nkibench_ops import linear, norm


@nki.jit
def kernel(x, ln_weight, ln_bias, linear_weight, linear_bias):
    h = norm.layer_norm(x, ln_weight, ln_bias, eps=1e-5)       # self.ln(x)
    return linear.linear(h, linear_weight, linear_bias)        # self.linear(.)
