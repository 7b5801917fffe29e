# One matmul with a 256-wide stationary operand (M = 256): the stationary free size is at most 128
# (nl.tile_size.gemm_stationary_fmax), so M has to be tiled by 128 as well.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,256] rhs=float32[128,512]
# expect-error: err_size_of_dimension_exceed_arch_limit line 18
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    res = nl.copy(nl.matmul(a, b, transpose_x=True))  # Mistake: a is [128, 256]
    nl.store(out, value=res)
    return out
