# L2_087 embed_ln_small: LayerNorm(Embedding(ids)), as eager PyTorch runs it: the embedding
# lookup (a row gather by indirect DMA, HBM out), then the LayerNorm (HBM in, HBM out).
import neuronxcc.nki as nki
from nkibench_ops import embedding, norm


@nki.jit
def kernel(ids, embed_weight, ln_weight, ln_bias):
    e = embedding.embedding(ids, embed_weight)                 # [B, S, D]
    return norm.layer_norm(e, ln_weight, ln_bias, eps=1e-5)
