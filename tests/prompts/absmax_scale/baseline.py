# P_001 absmax_scale: x / (max |x| over the last axis + 1e-6) * w, legacy dialect. The same kernel as
# the legacy example in prompts/v1/dialect_legacy.md (the task's baseline must be a file of its own).
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

P = nl.tile_size.pmax  # 128: partitions per tile


@nki.jit
def kernel(x, w):
    # x [..., D]: every leading axis flattened into rows (partitions), D along the free axis.
    D = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((rows, D))      # views, no data moves
    out2 = out.reshape((rows, D))

    ip = nl.arange(P)[:, None]     # partition index [P, 1]
    jf = nl.arange(D)[None, :]     # free index [1, D]
    w_row = nl.load(w.reshape((1, D)))   # [1, D], broadcast across partitions by nl ops

    for t in nl.affine_range(math.ceil(rows / P)):   # ceil: the last tile may be partial
        r = t * P + ip
        valid = r < rows
        tile = nl.load(x2[r, jf], mask=valid)                                   # [P, D]
        amax = nl.max(nl.abs(tile, mask=valid), axis=1, keepdims=True, mask=valid)  # [P, 1]
        scale = nl.reciprocal(nl.add(amax, 1e-6, mask=valid), mask=valid)      # [P, 1]
        y = nl.multiply(nl.multiply(tile, scale, mask=valid), w_row, mask=valid)
        nl.store(out2[r, jf], value=y, mask=valid)
    return out
