# Baseline of the layernorm_affine test task: y = (x - mean) * rsqrt(var + eps) * w + b over the
# free axis, 128 rows per tile; the weight and bias vectors are loaded onto one partition and
# broadcast to all 128.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, ln_weight, ln_bias):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    i0 = nl.arange(1)[:, None]
    ip = nl.arange(128)[:, None]
    jf = nl.arange(F)[None, :]
    w = nl.load(ln_weight.reshape((1, F))[i0, jf]).broadcast_to((128, F))
    b = nl.load(ln_bias.reshape((1, F))[i0, jf]).broadcast_to((128, F))
    for t in nl.affine_range(math.ceil(rows / 128)):
        r = t * 128 + ip
        tile = nl.load(x[r, jf], mask=(r < rows))
        mean = nl.mean(tile, axis=1, keepdims=True)
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)
        y = nl.multiply(centred, nl.rsqrt(nl.add(var, 1e-5)))
        nl.store(out[r, jf], value=nl.add(nl.multiply(y, w), b), mask=(r < rows))
    return out
