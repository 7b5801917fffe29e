# Folding a per-element weight into the activation: gamma is a full [128, 256] tile, but the
# activation's scale is one number, or one value per partition ([P, 1]).
#
# entry: gelu_scaled_kernel
# inputs: x=float32[128,256] gamma=float32[128,256]
# expect-error: err_activation_scale_scalar_or_vector line 17
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def gelu_scaled_kernel(x, gamma):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    g = nl.load(gamma)
    y = nisa.activation(op=nl.gelu, data=t, scale=g)  # Mistake: multiply by g separately
    nl.store(out, value=y)
    return out
