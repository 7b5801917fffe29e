# A correct but slow kernel for the int_scale test task: 16-row tiles instead of 128-row ones, so
# it issues eight times the DMAs and instructions of the baseline and uses an eighth of the
# partitions. Verify must accept it and report a speedup below 1.
#
# task: int_scale
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, k):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(16)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.sequential_range(math.ceil(rows / 16)):
        i = t * 16 + ip
        a = nl.load(x[i, jf], mask=(i < rows))
        b = nl.load(k[i, jf], mask=(i < rows))
        nl.store(out[i, jf], value=nl.multiply(a, b, dtype=nl.float32), mask=(i < rows))
    return out
