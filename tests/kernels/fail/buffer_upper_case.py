# Allocating a scratch tile with buffer="SBUF", spelt as the hardware docs spell the memory: the
# buffer is an nl buffer object (nl.sbuf), or its lower-case name.
#
# entry: scratch_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_unknown_buffer line 16
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def scratch_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer="SBUF")  # Mistake: not an NKI buffer
    t[...] = nl.load(x)
    nl.store(out, value=t)
    return out
