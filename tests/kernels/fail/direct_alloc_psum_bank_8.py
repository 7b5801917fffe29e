# Four PSUM accumulators placed on banks base_bank .. base_bank + 3 with base_bank=5: banks 8 and
# 9 do not exist (PSUM has eight, 0 to 7).
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,2048]
# expect-error: nkia_allocation_out_of_range line 21
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    NT = N // 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=M * 4))
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=(M + N) * 4))
    acc = nl.ndarray((NT, nl.par_dim(M), 512), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=5, num_bank_tiles=(NT,)))  # Mistake: banks 5..8
    a[...] = nl.load(lhsT)
    b[...] = nl.load(rhs)
    for n in nl.affine_range(NT):
        acc[n] += nl.matmul(a, b[:, n * 512:(n + 1) * 512], transpose_x=True)
        res[:, n * 512:(n + 1) * 512] = nl.copy(acc[n])
    nl.store(out, value=res)
    return out
