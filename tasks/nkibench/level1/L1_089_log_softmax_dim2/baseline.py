# NKIBench log_softmax_dim2: out = F.log_softmax(x, dim=2), the log-softmax of every row of x [B, S, D]
# (viewed as [B*S, D]).
# 128 rows per tile on the partitions, the whole row along the free axis: subtract the row max,
# exponentiate and sum, then out = (x - max) - log(sum).
# The last row tile is masked when the row count is not a multiple of 128.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cols = x.shape[-1]
    rows = x.shape[0] * x.shape[1]
    xv = x.reshape((rows, cols))
    ov = out.reshape((rows, cols))

    P = nl.tile_size.pmax    # 128 rows per tile
    ip = nl.arange(P)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + P - 1) // P):
        i = t * P + ip
        m = (i < rows)
        tile = nl.load(xv[i, jf], mask=m)
        row_max = nl.max(tile, axis=1, keepdims=True, mask=m)          # [P, 1]
        shifted = nl.subtract(tile, row_max, mask=m)
        row_sum = nl.sum(nl.exp(shifted, mask=m), axis=1, keepdims=True, mask=m)
        result = nl.subtract(shifted, nl.log(row_sum, mask=m), mask=m)   # x - max - log(sum exp)
        nl.store(ov[i, jf], value=result, mask=m)
    return out
