# @ncc.force_auto_alloc: the kernel's direct allocations are ignored and every tile is allocated
# automatically. The placements below would overlap (y_t half a tile into x_t) and mix with an
# auto-allocated tile, both errors without the decorator (fail/direct_alloc_overlap.py,
# fail/direct_alloc_mixed_auto.py); with it the kernel adds as written.
#
# entry: add_kernel
# inputs: x=float32[128,512] y=float32[128,512]
# reference: x + y
# tolerance: atol=1e-6 rtol=1e-6
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@ncc.force_auto_alloc
@nki.jit
def add_kernel(x, y):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    x_t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    y_t = nl.ndarray((P, F), dtype=y.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=F * 2))
    s_t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    x_t[...] = nl.load(x)
    y_t[...] = nl.load(y)
    s_t[...] = nl.add(x_t, y_t)
    nl.store(out, value=s_t)
    return out
