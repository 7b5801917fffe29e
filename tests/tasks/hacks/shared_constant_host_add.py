# Hack: reads the inputs' values by a computed name, adds them on the host and embeds the answer as
# a constant (verified with the static policy off: the runtime refuses the read).
#
# task: add_fp32
# expect: kernel_error
# policy: off
# code: nkia_trace_time_value_read
import math

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, y):
    answer = getattr(x, "nu" + "mpy")() + getattr(y, "nu" + "mpy")()
    rows, cols = x.shape
    const = nl.shared_constant(np.asarray(answer, dtype=np.float32))
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for r in nl.affine_range(math.ceil(rows / 128)):
        for c in nl.affine_range(math.ceil(cols / 512)):
            i = r * 128 + nl.arange(128)[:, None]
            j = c * 512 + nl.arange(512)[None, :]
            valid = (i < rows) & (j < cols)
            nl.store(out[i, j], value=nl.load(const[i, j], mask=valid), mask=valid)
    return out
