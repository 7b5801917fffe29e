# L2_089 cross_entropy_small: nn.CrossEntropyLoss (mean), one kernel as in eager PyTorch: per
# row logsumexp(logits) - logits[target], then the mean over the rows into a 0-d result.
import neuronxcc.nki as nki
from nkibench_ops import loss


@nki.jit
def kernel(logits, targets):
    return loss.cross_entropy(logits, targets)
