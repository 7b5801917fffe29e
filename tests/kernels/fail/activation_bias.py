# Softmax's exp(x - max) with the whole [P, F] shifted tile passed as the activation bias: the bias
# must be a [P, 1] column (one value per partition).
#
# entry: softmax_kernel
# inputs: x=float32[128,256]
# expect-error: err_activation_bias_invalid_type line 18
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def softmax_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    neg_max = nisa.tensor_reduce(nl.maximum, t, axis=1, negate=True, keepdims=True)
    shift = nl.add(nl.zeros_like(t), neg_max)     # Mistake: broadcast to [128, 256]
    e = nisa.activation(op=nl.exp, data=t, bias=shift)
    nl.store(out, value=nl.divide(e, nl.sum(e, axis=1, keepdims=True)))
    return out
