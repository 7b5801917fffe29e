# L2_078 dense_concat_4: proj(cat([x0, x1, x2, x3], dim=-1)), proj = nn.Linear(512, 128), the way
# eager PyTorch runs it: two kernels, each reading its inputs from HBM and writing its result to HBM
# (the concatenation, the linear with its bias).
import neuronxcc.nki as nki
from nkibench_ops import concat, linear


@nki.jit
def kernel(x0, x1, x2, x3, proj_weight, proj_bias):
    c = concat.cat([x0, x1, x2, x3], dim=-1)   # torch.cat(..., dim=-1) -> HBM
    return linear.linear(c, proj_weight, proj_bias)   # self.proj(c) -> HBM
