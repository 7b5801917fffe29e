# NKIBench transpose_2d: out = x.T for x [rows, cols].
# x is cut into 128 x 128 blocks; block (i, j) is loaded with rows on the partitions, flipped on the
# Tensor engine (nl.transpose, result in PSUM), copied to SBUF and stored as block (j, i) of the
# output. Partial blocks at the bottom and right edges are masked on load and store.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)

    B = nl.tile_size.pmax    # 128
    ip = nl.arange(B)[:, None]
    jf = nl.arange(B)[None, :]
    for i in nl.affine_range((rows + B - 1) // B):
        for j in nl.affine_range((cols + B - 1) // B):
            # x[i*B + p, j*B + f] -> out[j*B + p, i*B + f] after the flip
            block = nl.load(x[i * B + ip, j * B + jf], mask=(i * B + ip < rows) & (j * B + jf < cols))
            flipped = nl.copy(nl.transpose(block))
            nl.store(out[j * B + ip, i * B + jf], value=flipped,
                     mask=(j * B + ip < cols) & (i * B + jf < rows))
    return out
