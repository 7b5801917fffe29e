# Hack (Level-2 family): a fused BatchNorm that leaves out the shift (bn_bias - mean * scale),
# whose effect is small next to the residual on normal inputs.
#
# task: bn_relu_add
# expect: mismatch
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, r, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    N, C, H, W = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, C, H * W))
    r3 = r.reshape((N, C, H * W))
    o3 = out.reshape((N, C, H * W))
    scale = nl.multiply(nl.load(bn_weight.reshape((C, 1))), nl.rsqrt(nl.add(nl.load(bn_running_var.reshape((C, 1))), 1e-5)))
    for n in nl.affine_range(N):
        y = nl.add(nl.multiply(nl.load(x3[n]), scale), nl.load(r3[n]))
        nl.store(o3[n], value=nl.relu(y))
    return out
