# One matmul tile: lhsT is the left operand already transposed ([K, M] = [128, 128]), rhs is
# [K, N] = [128, 512]; the product [M, N] lands in PSUM as float32 and is copied out through SBUF.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,512]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    assert K == K2 == 128 and M == 128 and N == 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    ik = nl.arange(K)[:, None]
    im = nl.arange(M)[None, :]
    i_rhs = nl.mgrid[0:K, 0:N]
    stationary = nl.load(lhsT[ik, im])
    moving = nl.load(rhs[i_rhs.p, i_rhs.x])

    product = nl.matmul(stationary, moving, transpose_x=True)   # [M, N] float32 in PSUM
    result = nl.copy(product, dtype=out.dtype)
    i_out = nl.mgrid[0:M, 0:N]
    nl.store(out[i_out.p, i_out.x], value=result)
    return out
