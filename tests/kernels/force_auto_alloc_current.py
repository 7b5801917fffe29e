# nki.compiler.force_auto_alloc in the current dialect, applied below @nki.jit: the address= of
# each tile is ignored. b asks for bytes half a tile into a while a still holds data (an overlap
# without the decorator); with it the kernel computes x + x as written.
#
# entry: double_kernel
# inputs: x=float32[128,256]
# reference: x + x
# tolerance: atol=1e-6 rtol=1e-6
import nki
import nki.compiler as ncc
import nki.isa as nisa
import nki.language as nl


@nki.jit
@ncc.force_auto_alloc
def double_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf, address=(0, 0))
    b = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf, address=(0, F * 2))
    c = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf, address=(0, F * 8))
    nisa.dma_copy(dst=a, src=x)
    nisa.dma_copy(dst=b, src=x)
    nisa.tensor_tensor(dst=c, data1=a, data2=b, op=nl.add)
    nisa.dma_copy(dst=out, src=c)
    return out
