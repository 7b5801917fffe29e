# Double-row FP8 matmul on trn2: K = 512 contracted in two steps of 256, each step's operands loaded
# as [128, 2, free] (row 2p + l of the K chunk at partition p, slot l) and multiplied with
# perf_mode="double_row_gen3", accumulating in one float32 PSUM tile.
#
# entry: matmul_kernel
# target: trn2
# inputs: lhsT=float8_e4m3[512,128] rhs=float8_e4m3[512,512]
# reference: lhsT.T @ rhs
# tolerance: atol=1e-4 rtol=1e-5
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // 256
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for kt in nl.affine_range(KT):
        a = nl.load(lhsT[kt * 256:(kt + 1) * 256, :].reshape((128, 2, M)))   # [128, 2, M]
        b = nl.load(rhs[kt * 256:(kt + 1) * 256, :].reshape((128, 2, N)))    # [128, 2, N]
        acc += nisa.nc_matmul(a, b, perf_mode="double_row_gen3")
    nl.store(out, value=nl.copy(acc))
    return out
