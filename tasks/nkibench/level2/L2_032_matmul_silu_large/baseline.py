# L2_032 matmul_silu_large: silu(nn.Linear(4096, 11008, bias=False)(x)), the way eager PyTorch
# runs it: the Linear writes x @ W.T to HBM, then the activation reads it back and
# writes the output.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, fc_weight):
    y = linear.linear(x, fc_weight)  # self.fc(x) -> HBM
    return elementwise.unary(y, nl.silu)  # F.silu(y) -> HBM
