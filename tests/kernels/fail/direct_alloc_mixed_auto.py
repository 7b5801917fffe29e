# A direct-allocation kernel with one scratch tile left on the compiler's allocator (buffer=nl.sbuf):
# auto- and direct-allocated tensors cannot be mixed, since the compiler's tile could land on bytes
# the kernel placed its own tiles at.
#
# entry: add_kernel
# inputs: x=float32[128,512] y=float32[128,512]
# expect-error: nkia_direct_allocation_mixed line 19
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(x, y):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    x_t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    y_t = nl.ndarray((P, F), dtype=y.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=F * 4))
    s_t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)  # Mistake: not placed
    x_t[...] = nl.load(x)
    y_t[...] = nl.load(y)
    s_t[...] = nl.add(x_t, y_t)
    nl.store(out, value=s_t)
    return out
