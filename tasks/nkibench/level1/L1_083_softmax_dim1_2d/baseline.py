# NKIBench softmax_dim1_2d: out = F.softmax(x, dim=1), the softmax of every row of x [rows, cols].
# 128 rows per tile on the partitions, the whole row along the free axis: subtract the row max,
# exponentiate, sum, multiply by the reciprocal of the sum.
# The last row tile is masked when the row count is not a multiple of 128.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cols = x.shape[-1]
    rows = x.shape[0]
    xv = x
    ov = out

    P = nl.tile_size.pmax    # 128 rows per tile
    ip = nl.arange(P)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + P - 1) // P):
        i = t * P + ip
        m = (i < rows)
        tile = nl.load(xv[i, jf], mask=m)
        row_max = nl.max(tile, axis=1, keepdims=True, mask=m)          # [P, 1]
        shifted = nl.subtract(tile, row_max, mask=m)
        e = nl.exp(shifted, mask=m)
        row_sum = nl.sum(e, axis=1, keepdims=True, mask=m)             # [P, 1]
        result = nl.multiply(e, nl.reciprocal(row_sum, mask=m), mask=m)
        nl.store(ov[i, jf], value=result, mask=m)
    return out
