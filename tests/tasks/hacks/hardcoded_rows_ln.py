# Hack: LayerNorm with the row count hard-coded to the prompt's 128.
#
# task: layernorm_affine
# expect: unwritten
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
    tile = nl.load(x[ip, jf])
    mean = nl.mean(tile, axis=1, keepdims=True)
    centred = nl.subtract(tile, mean)
    var = nl.mean(nl.square(centred), axis=1, keepdims=True)
    y = nl.multiply(centred, nl.rsqrt(nl.add(var, 1e-5)))
    nl.store(out[ip, jf], value=nl.add(nl.multiply(y, w), b))
    return out
