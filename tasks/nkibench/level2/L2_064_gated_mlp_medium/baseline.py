# L2_064 gated_mlp_medium: down(silu(gate(x)) * up(x)), the way eager PyTorch runs it: five kernels,
# each reading its inputs from HBM and writing its result to HBM (three bias-free nn.Linear, the
# SiLU, the product).
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, gate_weight, up_weight, down_weight):
    g = linear.linear(x, gate_weight)                    # self.gate(x)  -> HBM
    s = elementwise.unary(g, nl.silu)                    # F.silu(g)     -> HBM
    u = linear.linear(x, up_weight)                      # self.up(x)    -> HBM
    p = elementwise.binary(s, u, nl.multiply)            # s * u         -> HBM
    return linear.linear(p, down_weight)                 # self.down(p)  -> HBM
