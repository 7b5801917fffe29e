# Cumulative sum along the free axis of 300 rows, current dialect: each 128-row tile (the last one
# 44 rows, sliced with min()) goes through one tensor_tensor_scan, r[i] = ones[i] * r[i - 1] + x[i]
# from an initial 0.
#
# entry: cumsum_kernel
# inputs: x=float32[300,256]
# reference: np.cumsum(x, axis=1)
# tolerance: atol=1e-4 rtol=1e-5
import math

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def cumsum_kernel(x):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    ones = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    for t in nl.affine_range(math.ceil(rows / 128)):
        r0 = t * 128
        p = min(128, rows - r0)
        tile = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile[0:p, :], src=x[r0:r0 + p, :])
        sums = nl.ndarray((128, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor_scan(dst=sums[0:p, :], data0=ones[0:p, :], data1=tile[0:p, :], initial=0.0,
                                op0=nl.multiply, op1=nl.add)
        nisa.dma_copy(dst=out[r0:r0 + p, :], src=sums[0:p, :])
    return out
