# A direct-allocation matmul whose PSUM accumulator is created with nl.zeros on a mod_alloc bank:
# tensors placed by the kernel cannot be created with an initial value (allocate with nl.ndarray
# and fill with nisa.memset).
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,512]
# expect-error: err_tensor_creation_on_scratchpad_with_init_value_not_supported line 21
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=M * 4))
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=(M + N) * 4))
    acc = nl.zeros((M, N), nl.float32, buffer=ncc.psum.mod_alloc(base_bank=0))  # Mistake: init value
    a[...] = nl.load(lhsT)
    b[...] = nl.load(rhs)
    acc += nl.matmul(a, b, transpose_x=True)
    res[...] = nl.copy(acc)
    nl.store(out, value=res)
    return out
