# L2_036 ln_dropout_gpt2: dropout(LayerNorm(x)) in eval mode, as eager PyTorch runs it: one
# LayerNorm kernel (HBM in, HBM out). Dropout in eval mode is the identity and launches nothing.
import neuronxcc.nki as nki
from nkibench_ops import norm


@nki.jit
def kernel(x, ln_weight, ln_bias):
    return norm.layer_norm(x, ln_weight, ln_bias, eps=1e-5)
