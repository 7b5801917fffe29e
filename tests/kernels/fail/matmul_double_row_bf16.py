# A double-row matmul (perf_mode="double_row_gen3") on bfloat16 operands: double-row mode contracts
# [128, 2, M] by [128, 2, N] FP8 operands only (cast them to nl.float8_e4m3, or use the normal mode).
#
# entry: matmul_kernel
# target: trn2
# inputs: lhsT=bfloat16[128,2,128] rhs=bfloat16[128,2,512]
# expect-error: nkia_matmul_double_row_layout line 21
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
    acc += nisa.nc_matmul(a, b, perf_mode="double_row_gen3")  # Mistake: bfloat16 operands
    nl.store(out, value=nl.copy(acc))
    return out
