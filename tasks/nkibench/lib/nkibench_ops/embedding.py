"""nn.Embedding lookups, one kernel each: a row gather from a table in HBM by indirect DMA.

The token ids (int32 on the device) go on the partitions, 128 per tile; nl.load of
``weight[idx_tile, :]`` fetches the 128 named rows of the table straight from HBM into the tile
(one row per partition), and the tile is stored to the output rows. An indirect load takes no mask,
so the last, partial tile is its own, smaller gather (its size is known when the kernel is traced),
and no lane ever holds an id that was not loaded.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128


def _gather_rows(ids2, weight, out2, start, n):
    """Rows start .. start+n-1 of out2 [rows, D] = weight[ids2[start .. start+n-1, 0], :]."""
    D = weight.shape[1]
    ip = nl.arange(n)[:, None]
    j0 = nl.arange(1)[None, :]
    jf = nl.arange(D)[None, :]
    idx = nl.load(ids2[start + ip, j0])                  # [n, 1] int32 row numbers
    rows = nl.load(weight[idx[ip, 0], jf])               # [n, D] gathered by indirect DMA
    nl.store(out2[start + ip, jf], value=rows)


@nki.jit
def embedding(ids, weight):
    """nn.Embedding: out[..., :] = weight[ids[...], :] for integer ids of any shape (int32) and a
    table weight [V, D]; the output has shape ids.shape + (D,) and the table's dtype. Every id must
    lie in [0, V) (an id outside the table faults, as on the device)."""
    V, D = weight.shape
    n = math.prod(ids.shape)
    out = nl.ndarray(tuple(ids.shape) + (D,), dtype=weight.dtype, buffer=nl.shared_hbm)
    ids2 = ids.reshape((n, 1))
    out2 = out.reshape((n, D))
    full = n // TILE_P
    for t in nl.affine_range(full):
        _gather_rows(ids2, weight, out2, t * TILE_P, TILE_P)
    if n % TILE_P:
        _gather_rows(ids2, weight, out2, full * TILE_P, n % TILE_P)
    return out
