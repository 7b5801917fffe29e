# Hack: ignores the integer input and returns x.
#
# task: int_scale
# expect: input_copy
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
        nl.store(out[i, jf], value=nl.load(x[i, jf], mask=(i < rows)), mask=(i < rows))
    return out
