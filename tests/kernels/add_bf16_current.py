# The tiled add on bfloat16 tensors, current dialect: one float32 add per element, rounded once
# into the bfloat16 destination tile.
#
# entry: add_kernel
# inputs: a=bfloat16[256,384] b=bfloat16[256,384]
# reference: a + b
# tolerance: atol=1e-6 rtol=4e-3
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def add_kernel(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for t in range(rows // 128):
        rows_t = nl.ds(t * 128, 128)
        lhs = nl.ndarray((128, cols), dtype=nl.bfloat16, buffer=nl.sbuf)
        rhs = nl.ndarray((128, cols), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a[rows_t, :])
        nisa.dma_copy(dst=rhs, src=b[rows_t, :])
        total = nl.ndarray((128, cols), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=total, data1=lhs, data2=rhs, op=nl.add)
        nisa.dma_copy(dst=out[rows_t, :], src=total)
    return out
