# One [128, 1024] float32 PSUM accumulator for two 512-column matmul results: a PSUM tile that
# receives matmul results holds at most one 2 KiB bank (512 float32) per partition; give each
# 512-column block its own accumulator.
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,1024]
# expect-error: nkia_psum_tile_exceeds_bank line 22
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    a = nl.load(lhsT)
    for n in nl.affine_range(N // 512):
        b = nl.load(rhs[:, n * 512:(n + 1) * 512])
        acc[:, n * 512:(n + 1) * 512] += nl.matmul(a, b, transpose_x=True)  # Mistake: acc spans two banks
    nl.store(out, value=nl.copy(acc))
    return out
