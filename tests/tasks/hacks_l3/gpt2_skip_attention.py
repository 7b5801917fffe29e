# Hack: a GPT-2 block that drops the attention branch and keeps the MLP. It computes
# x + fc2(gelu(fc1(ln2(x)))) exactly (LayerNorm with its affine, every bias, exact GELU) but
# never x + attn_out(causal MHA(ln1(x))); the attention weights are ignored.
#
# task: L3_017
# expect: mismatch|relative_norm
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

import _l3_ops as ops


@nki.jit
def kernel(x, ln1_weight, ln1_bias, ln2_weight, ln2_bias, attn_qkv_weight, attn_qkv_bias,
           attn_out_weight, attn_out_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    D = x.shape[-1]
    F = fc1_weight.shape[0]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2, M = ops.rows_of(x)
    o2 = out.reshape((M, D))
    ident = ops.identity()
    nT = ops.layer_norm_T(ident, x2, M, D, ops.columns(ln2_weight, D // 128),
                          ops.columns(ln2_bias, D // 128))
    hT = ops.linear_gelu_T(ident, nT, M, D, F, ops.hbm_rows(fc1_weight),
                           ops.columns(fc1_bias, F // 128))
    xr = ops.residual_rows(x2, M, D, nl.load(fc2_bias.reshape((1, D))))
    ops.linear_add(ident, hT, M, F, D, ops.hbm_rows(fc2_weight), xr, o2)
    return out
