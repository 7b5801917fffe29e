# L2_026 linear_bias_relu_batch: relu(nn.Linear(512, 512)(x)), the way eager PyTorch
# runs it: the Linear writes x @ W.T + b to HBM, then the activation reads it back and
# writes the output.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from nkibench_ops import elementwise, linear


@nki.jit
def kernel(x, fc_weight, fc_bias):
    y = linear.linear(x, fc_weight, fc_bias)  # self.fc(x) -> HBM
    return elementwise.unary(y, nl.relu)  # F.relu(y) -> HBM
