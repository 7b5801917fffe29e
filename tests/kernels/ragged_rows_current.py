# Ragged rows and columns, current dialect: 300 rows are three 128-row tiles, the last one 44
# rows long; 200 columns are two 128-column chunks, the last 72 wide. Each tile is sliced to its
# valid size (min() bounds), as kernels in the current dialect do without masks. Output 0 is
# relu(x) * 2 + 1; output 1 the row sums of x, as [rows, 1].
#
# entry: ragged_kernel
# inputs: x=float32[300,200]
# reference: (np.maximum(x, 0) * 2 + 1, x.sum(axis=1, keepdims=True))
# tolerance: atol=1e-5 rtol=1e-5
import math

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def ragged_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    sums = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(math.ceil(rows / 128)):
        r0 = t * 128
        p = min(128, rows - r0)
        acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=acc[0:p, :], value=0.0)
        for c in nl.sequential_range(math.ceil(cols / 128)):
            c0 = c * 128
            f = min(128, cols - c0)
            tile = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=tile[0:p, 0:f], src=x[r0:r0 + p, c0:c0 + f])
            y = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
            nisa.activation(dst=y[0:p, 0:f], op=nl.relu, data=tile[0:p, 0:f])
            nisa.tensor_scalar(dst=y[0:p, 0:f], data=y[0:p, 0:f], op0=nl.multiply, operand0=2.0, op1=nl.add,
                               operand1=1.0)
            nisa.dma_copy(dst=out[r0:r0 + p, c0:c0 + f], src=y[0:p, 0:f])
            part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_reduce(dst=part[0:p, :], op=nl.add, data=tile[0:p, 0:f], axis=1, keepdims=True)
            nisa.tensor_tensor(dst=acc[0:p, :], data1=acc[0:p, :], data2=part[0:p, :], op=nl.add)
        nisa.dma_copy(dst=sums[r0:r0 + p, :], src=acc[0:p, :])
    return out, sums
