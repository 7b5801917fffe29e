# A direct-allocation kernel that keeps the tile nl.load returns (t = nl.load(x)) instead of loading
# into a placed tile (t[...] = nl.load(x)): that tile is the compiler's to allocate, which a kernel
# that places its tiles itself cannot have.
#
# entry: scale_kernel
# inputs: x=float32[128,512]
# expect-error: nkia_direct_allocation_mixed line 18
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def scale_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    t = nl.load(x)  # Mistake: a tile the compiler allocates
    s[...] = nl.multiply(t, 0.5)
    nl.store(out, value=s)
    return out
