# exp of the even columns only, with mask=(jf % 2 == 0): a mask must be an affine range condition,
# and % is not affine (index the even columns directly, x[ip, 2 * j]).
#
# entry: even_exp_kernel
# inputs: x=float32[128,256]
# expect-error: err_unsupported_expression_in_mask line 19
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def even_exp_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(P)[:, None]
    jf = nl.arange(F)[None, :]
    t = nl.load(x[ip, jf])
    y = nl.exp(t, mask=(jf % 2 == 0))  # Mistake: not an affine condition
    nl.store(out[ip, jf], value=nl.add(y, t))
    return out
