# Blocked matmul that forgets to pick the K tile out of the hoisted [128, KT, 128] stationary
# block: nc_matmul takes 2-D operands.
#
# entry: matmul_kernel
# inputs: lhsT=float32[256,128] rhs=float32[256,512]
# expect-error: err_exceed_max_supported_dimension line 23
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 128
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    lhs_tiles = nl.ndarray((128, KT, M), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(KT):
        lhs_tiles[:, k, :] = nl.load(lhsT[k * 128:(k + 1) * 128, :])
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(KT):
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nl.matmul(lhs_tiles, b, transpose_x=True)  # Mistake: the whole [128, KT, 128] block, not lhs_tiles[:, k, :]
    nl.store(out, value=nl.copy(acc))
    return out
