# L2_093 bilinear: nn.Bilinear(x, y) = x^T W[o] y + bias[o], in three kernels (eager PyTorch runs
# it as matrix products too), each from HBM to HBM:
#   z[b, (o, i)] = sum_j W[o, i, j] y[b, j]   a linear of y with W seen as [O*I, J] (no copy);
#   s[b, o]      = sum_i z[b, o, i] x[b, i]   a batched product [O, I] @ [I, 1] per b;
#   out          = s + bias                   along the last dimension.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, y, bilinear_weight, bilinear_bias):
    B, I = x.shape
    O, _, J = bilinear_weight.shape
    z = linear.linear(y, bilinear_weight.reshape((O * I, J)))              # [B, O*I]
    s = linear.bmm(z.reshape((B, O, I)), x.reshape((B, I, 1)))              # [B, O, 1]
    return elementwise.row_broadcast(s.reshape((B, O)), bilinear_bias, nl.add)
