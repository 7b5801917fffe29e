# Hand-placed tiles laid out from a byte offset computed for a bigger chip: the second tile starts
# at 176 KiB, and 176 KiB + 8 KiB runs past the 180224 usable bytes per SBUF partition of trn1.
#
# entry: scale_kernel
# inputs: x=float32[128,2048]
# expect-error: nkia_allocation_out_of_range line 17
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def scale_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    s = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=176 * 1024))  # Mistake: past SBUF
    t[...] = nl.load(x)
    s[...] = nl.multiply(t, 3.0)
    nl.store(out, value=s)
    return out
