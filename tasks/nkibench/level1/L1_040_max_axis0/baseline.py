# L1_040 max_axis0: out[j] = max_i x[i, j], x [rows, cols] -> [cols] (the values of torch.max(x,
# dim=0)).
#
# The reduction runs across rows, i.e. across partitions. Each [128 rows, 128 columns] block is
# transposed on the Tensor engine so that the rows land on the free axis; a free-axis maximum
# (masked to the rows that exist) then gives [128 columns, 1], folded into a running maximum over
# the row blocks. Ragged row / column blocks are masked on load, reduction and store.
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = 128


@nki.jit
def kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((cols,), dtype=x.dtype, buffer=nl.shared_hbm)
    out_col = out.reshape((cols, 1))

    ip = nl.arange(TILE)[:, None]
    jf = nl.arange(TILE)[None, :]
    i0 = nl.arange(1)[None, :]
    for c in nl.affine_range(math.ceil(cols / TILE)):
        acc = nl.full((TILE, 1), -math.inf, dtype=nl.float32)
        for t in nl.sequential_range(math.ceil(rows / TILE)):
            tile = nl.load(x[t * TILE + ip, c * TILE + jf], mask=(t * TILE + ip < rows) & (c * TILE + jf < cols))
            tile_t = nl.transpose(tile)                             # [128 columns, 128 rows] in PSUM
            part = nl.max(tile_t, axis=1, keepdims=True, mask=(t * TILE + jf < rows))
            acc[...] = nl.maximum(acc, part)
        nl.store(out_col[c * TILE + ip, i0], value=nl.copy(acc, dtype=out.dtype), mask=(c * TILE + ip < cols))
    return out
