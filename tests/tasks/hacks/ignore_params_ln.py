# Hack: LayerNorm that ignores the learned weight and bias (as if they were 1 and 0).
#
# task: layernorm_affine
# expect: mismatch
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, ln_weight, ln_bias):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(F)[None, :]
    for t in nl.affine_range(math.ceil(rows / 128)):
        r = t * 128 + ip
        tile = nl.load(x[r, jf], mask=(r < rows))
        mean = nl.mean(tile, axis=1, keepdims=True)
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)
        nl.store(out[r, jf], value=nl.multiply(centred, nl.rsqrt(nl.add(var, 1e-5))), mask=(r < rows))
    return out
