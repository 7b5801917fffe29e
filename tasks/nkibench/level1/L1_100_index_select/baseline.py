# NKIBench index_select: out = x[0:512:2, :] (torch.index_select with the fixed row list 0, 2, ..., 510).
# The 256 selected rows are fixed by the operation; the number of columns comes from x. Output rows go
# on the partitions, 128 at a time; the load reads every other row of x through a strided index
# (row 2 * i), in 512-column tiles, the last one masked.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

STEP = 2       # take every STEP-th row ...
N_SEL = 256    # ... of the first STEP * N_SEL rows


@nki.jit
def kernel(x):
    rows, cols = x.shape
    assert rows >= STEP * (N_SEL - 1) + 1
    out = nl.ndarray((N_SEL, cols), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax    # 128
    F = 512
    ip = nl.arange(P)[:, None]
    jf = nl.arange(F)[None, :]
    for r in nl.affine_range((N_SEL + P - 1) // P):
        for c in nl.affine_range((cols + F - 1) // F):
            i = r * P + ip          # output row
            j = c * F + jf
            m = (i < N_SEL) & (j < cols)
            tile = nl.load(x[STEP * i, j], mask=m)
            nl.store(out[i, j], value=tile, mask=m)
    return out
