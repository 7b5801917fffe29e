# A running sum kept in the caller's tensor: the current dialect updates inputs in place (AWS's NKI
# CPU simulator guide; nki-library's rope_hf and NxDI's rolling_buffer_set_state do it), with no
# annotation; the kernel returns the updated input.
#
# entry: accumulate_kernel
# inputs: acc=float32[128,64] x=float32[128,64]
# reference:
#   return (acc + x,)
# tolerance: atol=0 rtol=0
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def accumulate_kernel(acc, x):
    a = nl.ndarray(acc.shape, dtype=acc.dtype, buffer=nl.sbuf)
    b = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=acc)
    nisa.dma_copy(dst=b, src=x)
    nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.add)
    nisa.dma_copy(dst=acc, src=a)
    return acc
