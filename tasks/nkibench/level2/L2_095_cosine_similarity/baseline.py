# L2_095 cosine_similarity: F.cosine_similarity(x, y, dim=-1), one kernel as in eager PyTorch:
# per row the dot product and both squared norms, then dot / sqrt(max(|x|^2, eps^2) max(|y|^2, eps^2)).
import neuronxcc.nki as nki
from nkibench_ops import reduce


@nki.jit
def kernel(x, y):
    return reduce.cosine_similarity(x, y, eps=1e-8)
