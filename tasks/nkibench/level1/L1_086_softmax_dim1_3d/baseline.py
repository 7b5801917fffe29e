# NKIBench softmax_dim1_3d: out = F.softmax(x, dim=1) for x [B, S, D]: for every batch item, each of
# the D columns is normalised over S. Per batch item the kernel takes 128 columns at a time and reads
# them transposed (column d on a partition, its S values along the free axis), does a row softmax
# (subtract the max, exponentiate, sum, scale by the reciprocal) and stores through the same
# transposed addressing. The last column tile is masked.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    B, S, D = x.shape
    out = nl.ndarray((B, S, D), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax    # 128 columns per tile
    id_ = nl.arange(P)[:, None]      # column d, on the partitions
    js = nl.arange(S)[None, :]       # position s, on the free axis
    for b in nl.affine_range(B):
        for t in nl.affine_range((D + P - 1) // P):
            d = t * P + id_
            m = (d < D)
            tile = nl.load(x[b, js, d], mask=m)                         # [P, S] = x[b, :, cols].T
            col_max = nl.max(tile, axis=1, keepdims=True, mask=m)
            e = nl.exp(nl.subtract(tile, col_max, mask=m), mask=m)
            col_sum = nl.sum(e, axis=1, keepdims=True, mask=m)
            result = nl.multiply(e, nl.reciprocal(col_sum, mask=m), mask=m)
            nl.store(out[b, js, d], value=result, mask=m)
    return out
