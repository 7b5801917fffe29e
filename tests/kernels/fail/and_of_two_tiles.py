# Combining two elementwise conditions with Python `and`: a tile has no single truth value, and
# `and` quietly returns one of its operands (use nl.logical_and, or &).
#
# entry: both_positive_kernel
# inputs: a=float32[128,256] b=float32[128,256]
# expect-error: err_ambiguous_tensor_truth_value line 18
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def both_positive_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta = nl.load(a)
    tb = nl.load(b)
    both = nl.greater(ta, 0.0) and nl.greater(tb, 0.0)  # Mistake: Python `and` on tiles
    nl.store(out, value=nl.multiply(ta, both))
    return out
