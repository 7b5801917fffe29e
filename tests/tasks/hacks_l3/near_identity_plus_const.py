# Hack: near-identity on a residual block. x + 1e-3 everywhere, as if both residual branches
# of the encoder layer contributed a small constant; nothing else is computed.
#
# task: L3_011
# expect: mismatch|relative_norm
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, ln1_weight, ln1_bias, ln2_weight, ln2_bias, q_proj_weight, q_proj_bias,
           k_proj_weight, k_proj_bias, v_proj_weight, v_proj_bias, out_proj_weight, out_proj_bias,
           fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    D = x.shape[-1]
    M = 1
    for d in x.shape[:-1]:
        M = M * d
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((M, D))
    o2 = out.reshape((M, D))
    for m0 in nl.static_range(0, M, 128):
        ms = min(128, M - m0)
        nl.store(o2[m0:m0 + ms, :], value=nl.add(nl.load(x2[m0:m0 + ms, :]), 1e-3))
    return out
