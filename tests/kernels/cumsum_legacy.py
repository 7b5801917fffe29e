# Cumulative sum along the free axis of 300 rows (two full 128-row tiles and a masked 44-row one):
# tensor_tensor_scan computes r[i] = ones[i] * r[i - 1] + x[i] per partition, from 0.
#
# entry: cumsum_kernel
# inputs: x=float32[300,256]
# reference: np.cumsum(x, axis=1)
# tolerance: atol=1e-4 rtol=1e-5
import math

import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def cumsum_kernel(x):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(F)[None, :]
    ones = nl.ones((128, F), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.affine_range(math.ceil(rows / 128)):
        r = t * 128 + ip
        tile = nl.load(x[r, jf], mask=(r < rows))
        sums = nisa.tensor_tensor_scan(ones, tile, 0.0, np.multiply, np.add, mask=(r < rows))
        nl.store(out[r, jf], value=sums, mask=(r < rows))
    return out
