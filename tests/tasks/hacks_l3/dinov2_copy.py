# Hack: the copy kernel that passed upstream's dinov2 task. DINOv2 initialises its layer scales
# ls1, ls2 to 1e-4, so x + ls1 * attn(.) + ls2 * mlp(.) is x to within 1e-4 at upstream's
# weights; our task draws the layer scales from U(0.5, 1.5), and the copy must fail.
#
# task: L3_046
# expect: input_copy
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, ls1, ls2, ln1_weight, ln1_bias, qkv_weight, qkv_bias, attn_out_weight, attn_out_bias,
           ln2_weight, ln2_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    B, S, D = x.shape
    out = nl.ndarray((B, S, D), dtype=x.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(B):
        for s0 in nl.static_range(0, S, 128):
            ss = min(128, S - s0)
            nl.store(out[b, s0:s0 + ss, :], value=nl.load(x[b, s0:s0 + ss, :]))
    return out
