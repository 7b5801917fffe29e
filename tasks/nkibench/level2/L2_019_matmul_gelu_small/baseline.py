# L2_019 matmul_gelu_small: gelu(a @ b), the way eager PyTorch runs it: the matmul writes a @ b to HBM,
# then the GELU (exact, erf: nl.gelu) reads it back and writes the output.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(a, b):
    y = linear.matmul(a, b)                  # torch.matmul(a, b) -> HBM
    return elementwise.unary(y, nl.gelu)     # F.gelu(y)          -> HBM
