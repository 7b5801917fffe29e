# L2_096 rope_embedding: x * cos + rotate_half(x) * sin, as eager PyTorch runs it, every result
# in HBM: the rotated copy cat([-x2, x1]) (the negation of the half done in the same copy), the two
# broadcast products, and their sum.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, movement


@nki.jit
def kernel(x, cos, sin):
    rotated = movement.rotate_half(x)                               # cat([-x2, x1], -1)
    a = movement.trailing_broadcast(x, cos, nl.multiply)            # x * cos
    b = movement.trailing_broadcast(rotated, sin, nl.multiply)      # rotated * sin
    return elementwise.binary(a, b, nl.add)
