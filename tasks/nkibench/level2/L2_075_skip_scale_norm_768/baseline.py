# L2_075 skip_scale_norm_768: LayerNorm(x * scale + residual), the way eager PyTorch runs it: three
# kernels, each reading its inputs from HBM and writing its result to HBM (the per-feature scale,
# the residual add, LayerNorm eps 1e-5 with its affine).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, norm


@nki.jit
def kernel(x, residual, scale, ln_weight, ln_bias):
    s = elementwise.row_broadcast(x, scale, nl.multiply)     # x * self.scale  -> HBM
    a = elementwise.binary(s, residual, nl.add)              # s + residual    -> HBM
    return norm.layer_norm(a, ln_weight, ln_bias, eps=1e-5)  # self.ln(a)      -> HBM
