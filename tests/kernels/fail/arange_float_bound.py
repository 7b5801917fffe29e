# Indexing the first half of the columns with nl.arange(F / 2): in Python 3, `/` gives a float, and
# an arange needs integer bounds (write F // 2).
#
# entry: half_copy_kernel
# inputs: x=float32[128,256]
# expect-error: nkia_bad_index line 17
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def half_copy_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(P)[:, None]
    jf = nl.arange(F / 2)[None, :]  # Mistake: F / 2 is a float
    nl.store(out[ip, jf], value=nl.load(x[ip, jf]))
    return out
