# NKIBench softmax_dim0_2d: out = F.softmax(x, dim=0) for x [rows, cols]: every column is normalised.
# The kernel takes 128 columns at a time and reads them transposed, one column of x per partition
# with all its rows along the free axis (x[row, col] addressed as [col on partitions, row on free]).
# Then it is a row softmax: subtract the max, exponentiate, sum, scale by the reciprocal, and the tile
# is stored back through the same transposed addressing. The last column tile is masked.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax    # 128 columns per tile
    ic = nl.arange(P)[:, None]       # column, on the partitions
    jr = nl.arange(rows)[None, :]    # row, on the free axis
    for t in nl.affine_range((cols + P - 1) // P):
        c = t * P + ic
        m = (c < cols)
        tile = nl.load(x[jr, c], mask=m)                                # [P, rows] = x[:, cols].T
        col_max = nl.max(tile, axis=1, keepdims=True, mask=m)
        e = nl.exp(nl.subtract(tile, col_max, mask=m), mask=m)
        col_sum = nl.sum(e, axis=1, keepdims=True, mask=m)
        result = nl.multiply(e, nl.reciprocal(col_sum, mask=m), mask=m)
        nl.store(out[jr, c], value=result, mask=m)
    return out
