# L3_050 perceiver_cross_attn: a Perceiver latent cross-attention block, run as eager PyTorch runs
# it: one kernel per operation (the two LayerNorms, the q, k and v projections, the head splits,
# q @ k^T, the scale, softmax, @ v, the head merge, the output projection, the residual add, the
# feed-forward's LayerNorm, ff1, GELU, ff2, the residual add), every intermediate written to HBM and
# read back by the next.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, elementwise, linear, norm, softmax


@nki.jit
def kernel(latents, inputs, ln_latent_weight, ln_latent_bias, ln_input_weight, ln_input_bias,
           q_proj_weight, q_proj_bias, k_proj_weight, k_proj_bias, v_proj_weight, v_proj_bias,
           out_proj_weight, out_proj_bias, ff_ln_weight, ff_ln_bias, ff1_weight, ff1_bias,
           ff2_weight, ff2_bias):
    B, Sq, D = latents.shape
    Skv = inputs.shape[1]
    H = 8
    Dh = D // H
    scale = 1.0 / math.sqrt(Dh)
    kv = norm.layer_norm(inputs, ln_input_weight, ln_input_bias, eps=1e-5)     # ln_input
    h = norm.layer_norm(latents, ln_latent_weight, ln_latent_bias, eps=1e-5)   # ln_latent
    q = linear.linear(h, q_proj_weight, q_proj_bias)
    k = linear.linear(kv, k_proj_weight, k_proj_bias)
    v = linear.linear(kv, v_proj_weight, v_proj_bias)
    q = blocks_vision.swap12(q.reshape((B, Sq, H, Dh)))                     # view + transpose(1, 2)
    k = blocks_vision.swap12(k.reshape((B, Skv, H, Dh)))
    v = blocks_vision.swap12(v.reshape((B, Skv, H, Dh)))
    # softmax(q @ k^T * scale) @ v, one kernel each
    s = linear.bmm_nt(q, k)
    s = elementwise.unary(s, lambda t: nl.multiply(t, scale))
    p = softmax.softmax(s)
    o = linear.bmm(p, v)                                                    # [B, H, S, Dh]
    # transpose(1, 2) + reshape
    o = blocks_vision.swap12(o).reshape((B, Sq, D))
    a = linear.linear(o, out_proj_weight, out_proj_bias)                   # out_proj
    x = elementwise.binary(latents, a, nl.add)                              # residual
    f = norm.layer_norm(x, ff_ln_weight, ff_ln_bias, eps=1e-5)             # ff_ln
    f = linear.linear(f, ff1_weight, ff1_bias)                             # ff1
    f = elementwise.unary(f, nl.gelu)                                      # exact GELU
    f = linear.linear(f, ff2_weight, ff2_bias)                             # ff2
    return elementwise.binary(x, f, nl.add)                                 # residual
