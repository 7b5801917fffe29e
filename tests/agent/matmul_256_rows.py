# Scripted agent turn 1 for L1_001 (matmul): output tiles of 256 rows, twice the 128 partitions a
# tile may span. The compile tool must report it.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    M, K = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    im = nl.arange(256)[:, None]
    ik = nl.arange(128)[:, None]
    jk = nl.arange(128)[None, :]
    jn = nl.arange(512)[None, :]
    for m in nl.affine_range(math.ceil(M / 256)):
        rows = m * 256 + im
        for n in nl.affine_range(math.ceil(N / 512)):
            cols = n * 512 + jn
            acc = nl.zeros((256, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a_tile = nl.load(a[rows, k * 128 + jk], mask=(rows < M))
                b_tile = nl.load(b[k * 128 + ik, cols], mask=(cols < N))
                acc += nl.matmul(a_tile, b_tile)
            res = nl.copy(acc, dtype=out.dtype)
            nl.store(out[rows, cols], value=res, mask=(rows < M) & (cols < N))
    return out
