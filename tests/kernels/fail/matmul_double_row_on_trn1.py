# A double-row FP8 matmul in a kernel built for trn1: double-row mode exists on NeuronCore-v3
# (trn2) and later; on trn1 contract K = 256 with two ordinary matmuls into one PSUM tile.
#
# entry: matmul_kernel
# inputs: lhsT=float8_e4m3[128,2,128] rhs=float8_e4m3[128,2,512]
# expect-error: nkia_feature_not_on_target line 20
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, _, M = lhsT.shape
    _, _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    acc += nisa.nc_matmul(a, b, perf_mode="double_row_gen3")  # Mistake: no double row on trn1
    nl.store(out, value=nl.copy(acc))
    return out
