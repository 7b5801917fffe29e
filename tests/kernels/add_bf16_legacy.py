# The tiled add on bfloat16 tensors: the Vector engine adds in float32 and rounds the sum once
# into bfloat16, so the result is within half a bfloat16 ulp (2^-9 relative) of the exact sum.
#
# entry: add_kernel
# inputs: a=bfloat16[256,384] b=bfloat16[256,384]
# reference: a + b
# tolerance: atol=1e-6 rtol=4e-3
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        lhs = nl.load(a[t * 128:(t + 1) * 128, :])
        rhs = nl.load(b[t * 128:(t + 1) * 128, :])
        nl.store(out[t * 128:(t + 1) * 128, :], value=lhs + rhs)
    return out
