# A bfloat16 matmul whose PSUM accumulator is created with the inputs' dtype: the Tensor engine
# accumulates and writes float32 into PSUM (bfloat16 PSUM results exist on NeuronCore-v4 only).
#
# entry: matmul_kernel
# inputs: lhsT=bfloat16[256,128] rhs=bfloat16[256,512]
# expect-error: nkia_matmul_psum_dtype line 21
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), dtype=lhsT.dtype, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        b = nl.load(rhs[k * 128:(k + 1) * 128, :])
        acc += nl.matmul(a, b, transpose_x=True)  # Mistake: acc is bfloat16
    nl.store(out, value=nl.copy(acc, dtype=out.dtype))
    return out
