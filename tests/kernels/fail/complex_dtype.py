# Allocating the output as complex64 to hold a phase rotation: NKI has no complex types (keep the
# real and imaginary parts in two float32 tensors).
#
# entry: rotate_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_unknown_dtype line 16
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np


@nki.jit
def rotate_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=np.complex64, buffer=nl.shared_hbm)  # Mistake: no complex dtype
    nl.store(out, value=nl.load(x))
    return out
