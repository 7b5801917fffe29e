# NKIBench contiguous_after_transpose: out = x.transpose(1, 2).contiguous() for x [batch, rows, cols],
# i.e. a 2-D transpose of every batch item. Each item is cut into 128 x 128 blocks; block (i, j)
# is loaded with rows on the partitions, flipped on the Tensor engine (nl.transpose into PSUM),
# copied to SBUF and stored as block (j, i) of the item's output. Edge blocks are masked on load
# and store.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    batch, rows, cols = x.shape
    out = nl.ndarray((batch, cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)

    B = nl.tile_size.pmax    # 128
    ip = nl.arange(B)[:, None]
    jf = nl.arange(B)[None, :]
    for b in nl.affine_range(batch):
        for i in nl.affine_range((rows + B - 1) // B):
            for j in nl.affine_range((cols + B - 1) // B):
                block = nl.load(x[b, i * B + ip, j * B + jf], mask=(i * B + ip < rows) & (j * B + jf < cols))
                flipped = nl.copy(nl.transpose(block))
                nl.store(out[b, j * B + ip, i * B + jf], value=flipped,
                         mask=(j * B + ip < cols) & (i * B + jf < rows))
    return out
