# NKIBench elem_abs: out = abs(x), elementwise over a [B, R, C] tensor.
# The tensor is viewed as [B*R, C] and walked in [128, 512] tiles (128 rows on the partitions,
# up to 512 columns on the free axis); the last row and column tiles are masked when the sizes are
# not multiples of the tile.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows = x.shape[0] * x.shape[1]
    cols = x.shape[2]
    xf = x.reshape((rows, cols))
    of = out.reshape((rows, cols))

    P = nl.tile_size.pmax    # 128 partitions
    F = 512                  # free-axis tile width
    ip = nl.arange(P)[:, None]
    jf = nl.arange(F)[None, :]
    for r in nl.affine_range((rows + P - 1) // P):
        for c in nl.affine_range((cols + F - 1) // F):
            i = r * P + ip
            j = c * F + jf
            m = (i < rows) & (j < cols)
            a = nl.load(xf[i, j], mask=m)
            nl.store(of[i, j], value=nl.abs(a, mask=m), mask=m)
    return out
