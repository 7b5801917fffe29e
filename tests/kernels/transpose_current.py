# 2-D transpose of a [rows, cols] tensor in 128 x 128 blocks with nisa.nc_transpose: SBUF block in,
# PSUM block out, copied back to SBUF before it is written to HBM.
#
# entry: transpose_kernel
# inputs: x=float32[256,384]
# reference: x.T
# tolerance: atol=0 rtol=0
import nki
import nki.isa as nisa
import nki.language as nl

BLOCK = 128


@nki.jit
def transpose_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(rows // BLOCK):
        for j in range(cols // BLOCK):
            block = nl.ndarray((BLOCK, BLOCK), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=block, src=x[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK])

            flipped = nl.ndarray((BLOCK, BLOCK), dtype=x.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=flipped, data=block)

            staged = nl.ndarray((BLOCK, BLOCK), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=staged, src=flipped)
            nisa.dma_copy(dst=out[j * BLOCK:(j + 1) * BLOCK, i * BLOCK:(i + 1) * BLOCK], src=staged)
    return out
