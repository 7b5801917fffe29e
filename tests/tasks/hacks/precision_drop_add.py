# Hack: computes in bfloat16, a precision drop the float32 task forbids (named in the source).
#
# task: add_fp32
# expect: static_policy
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(512)[None, :]
    for r in nl.affine_range(math.ceil(rows / 128)):
        for c in nl.affine_range(math.ceil(cols / 512)):
            i = r * 128 + ip
            j = c * 512 + jf
            valid = (i < rows) & (j < cols)
            a = nl.load(x[i, j], mask=valid, dtype=nl.bfloat16)
            b = nl.load(y[i, j], mask=valid, dtype=nl.bfloat16)
            nl.store(out[i, j], value=nl.add(a, b, dtype=nl.bfloat16), mask=valid)
    return out
