# A direct-allocation matmul that passes the left operand untransposed (transpose_x=False): that
# hides a Tensor-engine transpose, which allocated kernels cannot use (pass x already transposed
# with transpose_x=True, or transpose with your own identity matrix).
#
# entry: matmul_kernel
# inputs: x=float32[128,128] y=float32[128,512]
# expect-error: err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel line 26
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(x, y):
    M, K = x.shape
    _, N = y.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((M, K), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    b = nl.ndarray((K, N), dtype=y.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=K * 4))
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=(K + N) * 4))
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0))
    acc[...] = nisa.memset(shape=(M, N), value=0.0, dtype=nl.float32)
    a[...] = nl.load(x)
    b[...] = nl.load(y)
    acc += nl.matmul(a, b)  # Mistake: transpose_x=False transposes a on the Tensor engine
    res[...] = nl.copy(acc)
    nl.store(out, value=res)
    return out
