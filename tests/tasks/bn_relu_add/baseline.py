# Baseline of T_004: relu(BatchNorm2d(x) + r) in one kernel. Channels on the partitions, each
# image's pixels along the free axis; the BatchNorm folds into a per-channel scale and shift:
#   scale = bn_weight / sqrt(bn_running_var + eps), shift = bn_bias - bn_running_mean * scale.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

EPS = 1e-5


@nki.jit
def kernel(x, r, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    N, C, H, W = x.shape
    S = H * W
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, S))
    r3 = r.reshape((N, C, S))
    o3 = out.reshape((N, C, S))
    col = lambda v: nl.load(v.reshape((C, 1)))
    scale = nl.multiply(col(bn_weight), nl.rsqrt(nl.add(col(bn_running_var), EPS)))
    shift = nl.subtract(col(bn_bias), nl.multiply(col(bn_running_mean), scale))
    for n in nl.affine_range(N):
        t = nl.load(x3[n])
        y = nl.add(nl.add(nl.multiply(t, scale), shift), nl.load(r3[n]))
        nl.store(o3[n], value=nl.relu(y))
    return out
