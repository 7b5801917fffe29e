# L3_040 vit_patch_embed_384_16: ViT patch embedding, run as eager PyTorch runs it: one kernel per
# operation (the 16x16 stride-16 convolution, as an im2col of the patches and a GEMM with the bias,
# which leaves the tokens in the [B, P, D] order that flatten(2).transpose(1, 2) gives; the cat with
# the cls token; the position embedding's add; LayerNorm), every intermediate written to HBM and
# read back by the next.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, linear, movement, norm


@nki.jit
def kernel(x, cls_token, pos_embed, patch_embed_weight, patch_embed_bias, norm_weight, norm_bias):
    D, C, P, _ = patch_embed_weight.shape
    cols = blocks_vision.patches(x, P)                                      # [B, 576, 3*16*16]
    t = linear.linear(cols, patch_embed_weight.reshape((D, C * P * P)), patch_embed_bias)
    t = blocks_vision.cls_cat(t, cls_token)                                 # [B, 577, D]
    t = movement.trailing_broadcast(t, pos_embed, nl.add)                   # + pos_embed
    return norm.layer_norm(t, norm_weight, norm_bias, eps=1e-5)             # self.norm
