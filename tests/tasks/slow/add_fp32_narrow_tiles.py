# A correct but slow kernel for the add_fp32 test task: 128 x 32 tiles instead of 128 x 512, so it
# issues sixteen times the DMAs and instructions of the baseline. Verify must accept it and report
# a speedup below 1.
#
# task: add_fp32
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(32)[None, :]
    for r in nl.sequential_range(math.ceil(rows / 128)):
        for c in nl.sequential_range(math.ceil(cols / 32)):
            i = r * 128 + ip
            j = c * 32 + jf
            valid = (i < rows) & (j < cols)
            a = nl.load(x[i, j], mask=valid)
            b = nl.load(y[i, j], mask=valid)
            nl.store(out[i, j], value=nl.add(a, b), mask=valid)
    return out
