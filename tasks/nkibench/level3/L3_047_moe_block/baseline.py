# L3_047 moe_block: top-2-of-8 mixture of experts, run the simple way eager PyTorch can run it on a
# device without data-dependent shapes: the router (linear, softmax), the top-2 selection as a dense
# [tokens, 8] weight matrix (zero for the experts not chosen), then every expert on every token (x @
# w1[e], GELU, @ w2[e]) and its output added in with its weight column; a token's six unchosen
# experts add exact zeros. One kernel per operation, every intermediate written to HBM and read
# back. (A kernel that computes only the chosen experts does a quarter of the expert work.)
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

from nkibench_ops import blocks_vision, elementwise, linear, softmax


@nki.jit
def kernel(x, experts_w1, experts_w2, gate_weight, gate_bias):
    B, S, D = x.shape
    E = experts_w1.shape[0]
    t = x.reshape((B * S, D))
    probs = softmax.softmax(linear.linear(t, gate_weight, gate_bias))      # [T, 8]
    g = blocks_vision.top2_gate(probs)                                      # topk + renormalise
    out = None
    for e in range(E):
        h = blocks_vision.matmul_expert(t, experts_w1, e)                   # tokens @ w1[e]
        h = elementwise.unary(h, nl.gelu)                                   # exact GELU
        y = blocks_vision.matmul_expert(h, experts_w2, e)                   # @ w2[e]
        out = blocks_vision.add_scaled_rows(out, y, g, e)                   # out += w[:, e] * y
    return out.reshape((B, S, D))
