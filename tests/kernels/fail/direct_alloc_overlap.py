# Two tiles placed by hand whose byte ranges overlap: x_t takes bytes [0, 2048) of each partition,
# and y_t was placed at 1024 (half a tile in) instead of 2048. y_t is loaded while x_t still holds
# data, so on the device the second load overwrites half of x_t before the add reads it.
#
# entry: add_kernel
# inputs: x=float32[128,512] y=float32[128,512]
# expect-error: nkia_allocation_overlap line 23
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(x, y):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    x_t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    y_t = nl.ndarray((P, F), dtype=y.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=F * 2))  # Mistake: F * 4
    s_t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=F * 8))
    x_t[...] = nl.load(x)
    y_t[...] = nl.load(y)
    # x_t is read here after y_t's load overwrote its upper half.
    s_t[...] = nl.add(x_t, y_t)
    nl.store(out, value=s_t)
    return out
