# L1_013 dot_product_fp32: sum(a * b) of two vectors of length n, a 0-d result.
#
# Both vectors are read as one-partition rows in chunks of 2048 elements; each chunk is multiplied
# on the Vector engine and summed along the free axis (masked past the end of the vectors), and the
# chunk sums accumulate in a [1, 1] float32 tile.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

CHUNK = 2048


@nki.jit
def kernel(a, b):
    n = a.shape[0]
    out = nl.ndarray((), dtype=a.dtype, buffer=nl.shared_hbm)
    a_row = a.reshape((1, n))
    b_row = b.reshape((1, n))

    i0 = nl.arange(1)[:, None]
    jf = nl.arange(CHUNK)[None, :]
    acc = nl.zeros((1, 1), dtype=nl.float32)
    for c in nl.sequential_range(math.ceil(n / CHUNK)):
        idx = c * CHUNK + jf
        a_tile = nl.load(a_row[i0, idx], mask=(idx < n))
        b_tile = nl.load(b_row[i0, idx], mask=(idx < n))
        prod = nl.multiply(a_tile, b_tile, mask=(idx < n))
        part = nl.sum(prod, axis=1, keepdims=True, mask=(idx < n))  # [1, 1]
        acc[...] = nl.add(acc, part)
    nl.store(out.reshape((1, 1)), value=nl.copy(acc, dtype=out.dtype))
    return out
