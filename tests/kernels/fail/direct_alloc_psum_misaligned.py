# A PSUM accumulator placed at byte 2 of its bank: PSUM is addressed in 4-byte words
# (nl.tile_size.psum_min_align), and an accumulator normally starts at byte 0 of a bank of its own.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,256]
# expect-error: nkia_allocation_misaligned line 19
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
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=ncc.psum.mod_alloc(base_bank=1, base_addr=2))  # Mistake
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=(M + N) * 4))
    a[...] = nl.load(lhsT)
    b[...] = nl.load(rhs)
    acc[...] = nl.matmul(a, b, transpose_x=True)
    res[...] = nl.copy(acc)
    nl.store(out, value=res)
    return out
