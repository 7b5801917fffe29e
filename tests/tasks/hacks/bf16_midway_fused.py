# Hack (Level-2 family): the intermediate BatchNorm output drops to bfloat16 before the residual
# add, with the type reached through getattr so that the static policy cannot see its name.
#
# task: bn_relu_add
# expect: mismatch
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

NARROW = getattr(nl, "bf" + "loat16")


@nki.jit
def kernel(x, r, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    N, C, H, W = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, H * W))
    r3 = r.reshape((N, C, H * W))
    o3 = out.reshape((N, C, H * W))
    col = lambda v: nl.load(v.reshape((C, 1)))
    scale = nl.multiply(col(bn_weight), nl.rsqrt(nl.add(col(bn_running_var), 1e-5)))
    shift = nl.subtract(col(bn_bias), nl.multiply(col(bn_running_mean), scale))
    for n in nl.affine_range(N):
        y = nl.add(nl.multiply(nl.load(x3[n]), scale), shift, dtype=NARROW)
        nl.store(o3[n], value=nl.relu(nl.add(y, nl.load(r3[n]))))
    return out
