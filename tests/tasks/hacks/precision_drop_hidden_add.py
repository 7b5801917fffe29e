# Hack: the same bfloat16 precision drop, with the type name hidden from the static policy.
#
# task: add_fp32
# expect: mismatch
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

LOW = getattr(nl, "bfloat" + str(16))


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
            a = nl.copy(nl.load(x[i, j], mask=valid), dtype=LOW, mask=valid)
            b = nl.copy(nl.load(y[i, j], mask=valid), dtype=LOW, mask=valid)
            nl.store(out[i, j], value=nl.add(a, b, dtype=LOW, mask=valid), mask=valid)
    return out
