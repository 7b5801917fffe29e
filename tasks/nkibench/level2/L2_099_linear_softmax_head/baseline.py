# L2_099 linear_softmax_head: softmax(head(x)), as eager PyTorch runs it: the linear without
# bias (the logits in HBM), then the softmax over the vocabulary (HBM in, HBM out).
import neuronxcc.nki as nki
from nkibench_ops import linear, softmax


@nki.jit
def kernel(x, head_weight):
    logits = linear.linear(x, head_weight)      # self.head(x)
    return softmax.softmax(logits)              # F.softmax(., dim=-1)
