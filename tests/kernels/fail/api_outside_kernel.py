# The @nki.jit decorator was forgotten: nl.ndarray called from a plain Python function is outside
# any kernel.
#
# entry: add_kernel
# inputs: a=float32[128,64] b=float32[128,64]
# expect-error: err_nki_api_outside_of_nki_kernel line 12
import neuronxcc.nki.language as nl


def add_kernel(a, b):  # Mistake: no @nki.jit: this is a plain Python function
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.add(nl.load(a), nl.load(b)))
    return out
