# tanh(0.1 * lhsT.T @ rhs + 0.5) with every on-chip tile placed by the kernel (address=(partition,
# byte offset)): lhsT resident as [P, KT, M], rhs streaming through two [128, 512] tiles used in
# turn, each 512-column result accumulated in a PSUM bank of its own (bank n at byte n * 2048) and
# passed through nisa.activation with a bias tile.
#
# entry: matmul_tanh_kernel
# inputs: lhsT=float32[512,128] rhs=float32[512,1024]
# reference: np.tanh(0.1 * (lhsT.T @ rhs) + 0.5)
# tolerance: atol=1e-5 rtol=1e-4
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tanh_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT, NT, TILE_N = K // 128, N // 512, 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    # SBUF bytes per partition: a [0, 2048), b0 / b1 [2048, 6144), bias [6144, 6148), res [6160, 8208).
    a = nl.ndarray((128, KT, M), dtype=lhsT.dtype, buffer=nl.sbuf, address=(0, 0))
    b = [nl.ndarray((128, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf, address=(0, KT * M * 4 + i * TILE_N * 4))
         for i in range(2)]
    bias = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf, address=(0, KT * M * 4 + 2 * TILE_N * 4))
    res = nl.ndarray((128, TILE_N), dtype=nl.float32, buffer=nl.sbuf, address=(0, KT * M * 4 + 2 * TILE_N * 4 + 16))

    nisa.memset(dst=bias, value=0.5)
    for k in range(KT):
        nisa.dma_copy(dst=a[:, k, :], src=lhsT[k * 128:(k + 1) * 128, :])
    for n in range(NT):
        acc = nl.ndarray((128, TILE_N), dtype=nl.float32, buffer=nl.psum, address=(0, n * 2048))
        for k in range(KT):
            nisa.dma_copy(dst=b[k % 2], src=rhs[k * 128:(k + 1) * 128, n * TILE_N:(n + 1) * TILE_N])
            nisa.nc_matmul(dst=acc, stationary=a[:, k, :], moving=b[k % 2])
        nisa.activation(dst=res, op=nl.tanh, data=acc, bias=bias, scale=0.1)
        nisa.dma_copy(dst=out[:, n * TILE_N:(n + 1) * TILE_N], src=res)
    return out
