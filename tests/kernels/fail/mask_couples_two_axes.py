# A causal (lower-triangular) mask written as mask=(jf <= ip): each comparison of a mask must
# bound one axis on its own; a condition that couples rows and columns needs nisa.affine_select.
#
# entry: causal_exp_kernel
# inputs: scores=float32[128,128]
# expect-error: err_unsupported_expression_in_mask line 17
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def causal_exp_kernel(scores):
    out = nl.ndarray(scores.shape, dtype=scores.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(128)[None, :]
    s = nl.load(scores[ip, jf])
    e = nl.exp(s, mask=(jf <= ip))  # Mistake: triangular condition
    nl.store(out[ip, jf], value=e)
    return out
