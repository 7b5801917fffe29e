# ReLU written as a mask on the data, mask=(t > 0): masks are index ranges fixed at compile time
# and cannot depend on tile values (use nl.relu, or nl.maximum(t, 0.0)).
#
# entry: relu_kernel
# inputs: x=float32[128,256]
# expect-error: err_unsupported_expression_in_mask line 16
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def relu_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    y = nl.zeros(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    y[...] = nl.copy(t, mask=(t > 0.0))  # Mistake: a data-dependent mask
    nl.store(out, value=y)
    return out
