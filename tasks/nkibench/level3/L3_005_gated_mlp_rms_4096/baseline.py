# L3_005 gated_mlp_rms_4096: x + down(silu(gate(n)) * up(n)), n = RMSNorm(x), the way eager
# PyTorch runs it: seven kernels, each reading its inputs from HBM and writing its result to HBM
# (RMSNorm eps 1e-6 with its weight, three bias-free nn.Linear, the SiLU, the product, the
# residual add).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear, norm


@nki.jit
def kernel(x, norm_weight, gate_weight, up_weight, down_weight):
    n = norm.rms_norm(x, norm_weight, eps=1e-6)                 # self.norm(x)
    g = linear.linear(n, gate_weight)                           # self.gate(n)
    g = elementwise.unary(g, nl.silu)                           # F.silu(g)
    u = linear.linear(n, up_weight)                             # self.up(n)
    p = elementwise.binary(g, u, nl.multiply)                   # silu(g) * u
    y = linear.linear(p, down_weight)                           # self.down(p)
    return elementwise.binary(x, y, nl.add)                     # residual + y
