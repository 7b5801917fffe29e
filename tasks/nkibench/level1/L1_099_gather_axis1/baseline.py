# NKIBench gather_axis1: out[r, k] = x[r, index[r, k]] (torch.gather along dim 1).
# Rows go on the partitions, 128 at a time. For a row tile, the whole rows of x and the matching rows
# of index are loaded; nl.gather_flattened then picks, within each partition, the elements named by
# the (uint32) indices, and the [128, K] result is stored. The index tensor reaches the kernel as
# int32 (task.toml: int64 in torch, int32 on the device); the last row tile is masked.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x, index):
    rows, cols = x.shape
    _, K = index.shape
    out = nl.ndarray((rows, K), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax    # 128
    ip = nl.arange(P)[:, None]
    jc = nl.arange(cols)[None, :]
    jk = nl.arange(K)[None, :]
    for r in nl.affine_range((rows + P - 1) // P):
        i = r * P + ip
        data = nl.load(x[i, jc], mask=(i < rows))
        idx = nl.load(index[i, jk], mask=(i < rows))
        idx_u32 = nl.copy(idx, dtype=nl.uint32, mask=(i < rows))
        picked = nl.gather_flattened(data, idx_u32, mask=(i < rows))
        nl.store(out[i, jk], value=picked, mask=(i < rows))
    return out
