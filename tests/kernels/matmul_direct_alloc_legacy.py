# tanh(0.1 * lhsT.T @ rhs + 0.5) with every on-chip tile placed by the kernel (direct allocation):
# lhsT stays resident as [KT, P, M] blocks, rhs streams through a double buffer of two [128, 512]
# tiles (num_free_tiles=(2,): block k reuses the bytes of block k - 2), each 512-column result
# accumulates in a PSUM bank of its own and goes through nisa.activation with an explicit bias tile.
#
# entry: matmul_tanh_kernel
# inputs: lhsT=float32[512,128] rhs=float32[512,1024]
# reference: np.tanh(0.1 * (lhsT.T @ rhs) + 0.5)
# tolerance: atol=1e-5 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_tanh_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT, NT, TILE_N = K // 128, N // 512, 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    # SBUF bytes per partition: a [0, 2048), b [2048, 6144), bias [6144, 6148), res [6160, 10256).
    a = nl.ndarray((KT, nl.par_dim(128), M), dtype=lhsT.dtype,
                   buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(KT,)))
    b = nl.ndarray((KT, nl.par_dim(128), TILE_N), dtype=rhs.dtype,
                   buffer=ncc.sbuf.mod_alloc(base_addr=KT * M * 4, num_free_tiles=(2,)))
    bias = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32,
                      buffer=ncc.sbuf.mod_alloc(base_addr=KT * M * 4 + 2 * TILE_N * 4))
    res = nl.ndarray((NT, nl.par_dim(128), TILE_N), dtype=nl.float32,
                     buffer=ncc.sbuf.mod_alloc(base_addr=KT * M * 4 + 2 * TILE_N * 4 + 16, num_free_tiles=(2,)))
    acc = nl.ndarray((NT, nl.par_dim(128), TILE_N), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(NT,)))

    bias[...] = 0.5
    for k in nl.affine_range(KT):
        a[k] = nl.load(lhsT[k * 128:(k + 1) * 128, :])
    for n in nl.affine_range(NT):
        for k in nl.sequential_range(KT):
            b[k] = nl.load(rhs[k * 128:(k + 1) * 128, n * TILE_N:(n + 1) * TILE_N])
            acc[n] += nl.matmul(a[k], b[k], transpose_x=True)
        res[n] = nisa.activation(op=nl.tanh, data=acc[n], bias=bias, scale=0.1)
        nl.store(out[:, n * TILE_N:(n + 1) * TILE_N], value=res[n])
    return out
