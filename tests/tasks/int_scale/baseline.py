# Baseline of the int_scale test task: out = x * k (k int32 on the device), 128 rows per tile, the
# last tile masked.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, k):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.affine_range(math.ceil(rows / 128)):
        i = t * 128 + ip
        a = nl.load(x[i, jf], mask=(i < rows))
        b = nl.load(k[i, jf], mask=(i < rows))
        nl.store(out[i, jf], value=nl.multiply(a, b, dtype=nl.float32), mask=(i < rows))
    return out
