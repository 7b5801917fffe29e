# Hack (Level-2 family): the batch loop hard-coded to the prompt's batch of 2; every other size
# is read from the arguments. The batch-3 variant leaves its last image unwritten.
#
# task: bn_relu_add
# expect: unwritten
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


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
    for n in nl.affine_range(2):
        y = nl.add(nl.add(nl.multiply(nl.load(x3[n]), scale), shift), nl.load(r3[n]))
        nl.store(o3[n], value=nl.relu(y))
    return out
