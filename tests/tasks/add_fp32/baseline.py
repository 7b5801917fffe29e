# Baseline of the add_fp32 test task: out = x + y over [rows, cols], 128-row x 512-column tiles,
# the ragged last tiles masked on load and store.
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
            a = nl.load(x[i, j], mask=valid)
            b = nl.load(y[i, j], mask=valid)
            nl.store(out[i, j], value=nl.add(a, b), mask=valid)
    return out
