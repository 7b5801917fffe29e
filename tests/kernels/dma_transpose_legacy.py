# DMA transposes and DMA accumulation, legacy dialect. Output 0 is x.T, each [64, 128] block of x
# turned into a [128, 64] SBUF tile by nisa.dma_transpose; output 1 the sum of x's four 64-row
# bands, accumulated in HBM by nisa.dma_copy(dst_rmw_op=np.add) from every iteration of an
# affine_range loop; output 2 a 3-D [4, 8, 128] tensor permuted (2, 1, 0).
#
# entry: dma_kernel
# inputs: x=float32[256,384] y=bfloat16[4,8,128]
# reference: (x.T, x.reshape(4, 64, 384).sum(axis=0), np.transpose(y, (2, 1, 0)))
# tolerance: atol=1e-5 rtol=1e-5
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def dma_kernel(x, y):
    rows, cols = x.shape
    out_t = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    bands = nl.ndarray((64, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    out_y = nl.ndarray((y.shape[2], y.shape[1], y.shape[0]), dtype=y.dtype, buffer=nl.shared_hbm)

    nl.store(bands, value=nl.zeros((64, cols), dtype=x.dtype))
    for b in nl.affine_range(rows // 64):
        band = nl.load(x[b * 64:(b + 1) * 64, :])
        nisa.dma_copy(dst=bands, src=band, dst_rmw_op=np.add)
        for c in nl.affine_range(cols // 128):
            t = nisa.dma_transpose(x[b * 64:(b + 1) * 64, c * 128:(c + 1) * 128])
            nl.store(out_t[c * 128:(c + 1) * 128, b * 64:(b + 1) * 64], value=t)

    nl.store(out_y, value=nisa.dma_transpose(y, axes=(2, 1, 0)))
    return out_t, bands, out_y
