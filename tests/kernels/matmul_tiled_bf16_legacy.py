# Tiled matmul on bfloat16 operands with a float32 result: the Tensor engine multiplies the exact
# bfloat16 values and accumulates in float32 PSUM, so only float32 summation error remains.
#
# entry: matmul_kernel
# inputs: lhsT=bfloat16[256,256] rhs=bfloat16[256,512]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        acc = nl.zeros((128, N), nl.float32, buffer=nl.psum)
        for k in nl.affine_range(K // 128):
            a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
            b = nl.load(rhs[k * 128:(k + 1) * 128, 0:N])
            acc += nisa.nc_matmul(a, b)
        nl.store(out[m * 128:(m + 1) * 128, 0:N], value=nl.copy(acc))
    return out
