# The contraction tiles of a matmul disagree: lhsT is tiled by 128 rows of K but rhs by 64, so
# stationary and moving have different partition counts.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,512]
# expect-error: err_num_partition_mismatch line 20
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)  # Mistake: 64 partitions where the stationary operand has 128
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs[0:64, :])
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
