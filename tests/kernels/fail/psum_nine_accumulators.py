# One PSUM accumulator per 512-column block of N = 4608, all hoisted out of the K loop: nine 2 KiB
# accumulators alive at once need more than PSUM's eight banks (16 KiB per partition).
#
# entry: matmul_kernel
# inputs: lhsT=bfloat16[256,128] rhs=bfloat16[256,4608]
# expect-error: nkia_psum_capacity_exceeded line 18
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    NB = N // 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    accs = [nl.zeros((M, 512), nl.float32, buffer=nl.psum) for _ in range(NB)]  # Mistake: 9 banks
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
        for n in nl.affine_range(NB):
            b = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            accs[n] += nl.matmul(a, b, transpose_x=True)
    for n in nl.affine_range(NB):
        nl.store(out[:, n * 512:(n + 1) * 512], value=nl.copy(accs[n]))
    return out
