# Adding a per-column offset given as a Python list: an NKI operand is a tile or a number, never a
# list (load the offsets from an HBM tensor into a tile, or add a single number).
#
# entry: offset_kernel
# inputs: x=float32[128,4]
# expect-error: nkia_bad_operand line 17
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def offset_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    y = nl.add(t, [1.0, 2.0, 3.0, 4.0])  # Mistake: a list is no operand
    nl.store(out, value=y)
    return out
