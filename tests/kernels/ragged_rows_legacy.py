# Ragged rows and columns under masks: 300 rows are three 128-row tiles, the last one 44 rows
# long; 200 columns are two 128-column chunks, the last 72 wide. Index tiles run past the end of
# the input and the output; mask= cuts every load, compute, reduction and store back to the
# valid box. Output 0 is relu(x) * 2 + 1; output 1 the row sums of x, as [rows, 1].
#
# entry: ragged_kernel
# inputs: x=float32[300,200]
# reference: (np.maximum(x, 0) * 2 + 1, x.sum(axis=1, keepdims=True))
# tolerance: atol=1e-5 rtol=1e-5
import math

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def ragged_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    sums = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(128)[None, :]
    i0 = nl.arange(1)[None, :]
    for t in nl.affine_range(math.ceil(rows / 128)):
        r = t * 128 + ip
        acc = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        for c in nl.sequential_range(math.ceil(cols / 128)):
            f = c * 128 + jf
            valid = (r < rows) & (f < cols)
            tile = nl.load(x[r, f], mask=valid)
            y = nisa.tensor_scalar(nl.relu(tile, mask=valid), np.multiply, 2.0, op1=np.add, operand1=1.0,
                                   mask=valid)
            nl.store(out[r, f], value=y, mask=valid)
            part = nl.sum(tile, axis=1, mask=valid)
            acc[...] = nl.add(acc, part, mask=(r < rows))
        nl.store(sums[r, i0], value=acc, mask=(r < rows))
    return out, sums
