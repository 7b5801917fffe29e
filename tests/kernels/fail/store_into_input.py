# An "in-place" residual add that stores its result back into the input x: kernel inputs are
# read-only (store into a new shared_hbm output, or declare x nt.mutable_tensor and return it).
#
# entry: residual_add_kernel
# inputs: x=float32[128,256] residual=float32[128,256]
# expect-error: err_cannot_update_immutable_parameter line 17
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def residual_add_kernel(x, residual):
    t = nl.load(x)
    r = nl.load(residual)
    nl.store(x, value=nl.add(t, r))  # Mistake: x is an input
    return x
