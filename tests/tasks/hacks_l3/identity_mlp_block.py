# Hack: identity on a residual block. x + fc2(gelu(fc1(LayerNorm(x)))) is close to x when the
# MLP branch is small; the kernel copies x into a fresh output and computes nothing else.
#
# task: L3_001
# expect: input_copy
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    D = x.shape[-1]
    M = 1
    for d in x.shape[:-1]:
        M = M * d
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((M, D))
    o2 = out.reshape((M, D))
    for m0 in nl.static_range(0, M, 128):
        ms = min(128, M - m0)
        nl.store(o2[m0:m0 + ms, :], value=nl.load(x2[m0:m0 + ms, :]))
    return out
