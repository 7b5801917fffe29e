# Adding a bias with nisa.activation(op=nl.add, ...): the activation's op is a Scalar-engine
# function (nl.exp, nl.tanh, nl.copy, ...), not an ALU operator (use op=nl.copy with bias=, or
# nisa.tensor_scalar).
#
# entry: bias_kernel
# inputs: x=float32[128,64] b=float32[128,1]
# expect-error: nkia_unsupported_operator line 18
#
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def bias_kernel(x, b):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t, bt = nl.load(x), nl.load(b)
    y = nisa.activation(op=nl.add, data=t, bias=bt)  # Mistake: nl.add is no activation function
    nl.store(out, value=y)
    return out
