# A double-row matmul given plain [K, free] tiles with K = 128: double-row mode contracts 256 values
# laid out as [128, 2, free] (128 partitions x the size-2 axis), so the operands must be 3-D.
#
# entry: matmul_kernel
# target: trn2
# inputs: lhsT=float8_e4m3[128,128] rhs=float8_e4m3[128,512]
# expect-error: nkia_matmul_double_row_layout line 23
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b, perf_mode=nisa.matmul_perf_mode.double_row)  # Mistake: 2-D
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
