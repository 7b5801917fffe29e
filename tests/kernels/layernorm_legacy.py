# Layer normalisation over the free axis, 128 rows per tile:
#   y = (x - mean) * rsqrt(var + eps) * gamma + beta
# mean and (population) variance come from free-axis reductions. gamma and beta are passed already
# broadcast to [rows, F]: loading a [1, F] vector onto all 128 partitions (broadcast_to / a ones
# matmul) is not supported by the simulator yet.
#
# entry: layernorm_kernel
# inputs: x=float32[256,512] gamma=float32[256,512]~uniform(0.5,1.5) beta=float32[256,512]
# reference:
#   mean = x.mean(axis=1, keepdims=True)
#   var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
#   return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
# tolerance: atol=1e-5 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

EPS = 1e-5


@nki.jit
def layernorm_kernel(x, gamma, beta):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.mgrid[0:128, 0:F]
    for t in nl.affine_range(rows // 128):
        r = t * 128 + i.p
        tile = nl.load(x[r, i.x])
        g = nl.load(gamma[r, i.x])
        b = nl.load(beta[r, i.x])

        mean = nl.mean(tile, axis=1, keepdims=True)               # [128, 1]
        centred = nl.subtract(tile, mean)
        var = nl.mean(nl.square(centred), axis=1, keepdims=True)
        rstd = nl.rsqrt(nl.add(var, EPS))                         # [128, 1]
        normed = nl.multiply(centred, rstd)
        y = nl.add(nl.multiply(normed, g), b)
        nl.store(out[r, i.x], value=y)
    return out
