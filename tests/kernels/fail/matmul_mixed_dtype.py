# Loading only the moving operand as bfloat16 "to halve its bytes" while the stationary one stays
# float32: a float32 matmul operand needs a float32 partner.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,512]
# expect-error: nkia_matmul_input_dtype line 16
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs, dtype=nl.bfloat16)  # Mistake: bfloat16 beside a float32 stationary operand
    res = nl.copy(nl.matmul(a, b, transpose_x=True))
    nl.store(out, value=res)
    return out
