"""Concatenation (torch.cat), one kernel: a copy through SBUF of every input into its slice of the
output.

For `dim`, each tensor is seen as 2-D [outer, d_i * inner] (outer = the product of the dimensions
before `dim`, inner = of those after it); input i fills the columns [off_i * inner, (off_i + d_i) *
inner) of the output's [outer, sum(d_i) * inner] view. Tiles of 128 rows x 512 columns; ragged tiles
are masked on load and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512


@nki.jit
def cat(tensors, dim=0):
    """torch.cat(tensors, dim): tensors a list (or tuple) of tensors of one dtype and rank, equal
    in every dimension but `dim` (negative dims count from the end)."""
    tensors = list(tensors)
    assert len(tensors) > 0, "cat: no tensors"
    first = tensors[0]
    rank = len(first.shape)
    d = dim + rank if dim < 0 else dim
    assert 0 <= d < rank, "cat: dim out of range"
    for t in tensors:
        assert len(t.shape) == rank and all(
            t.shape[a] == first.shape[a] for a in range(rank) if a != d), \
            "cat: the tensors differ in a dimension other than dim"
        assert t.dtype == first.dtype, "cat: the tensors differ in dtype"
    total = sum(t.shape[d] for t in tensors)
    out_shape = tuple(first.shape[:d]) + (total,) + tuple(first.shape[d + 1:])
    out = nl.ndarray(out_shape, dtype=first.dtype, buffer=nl.shared_hbm)

    outer = math.prod(first.shape[:d])
    inner = math.prod(first.shape[d + 1:])
    o2 = out.reshape((outer, total * inner))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    off = 0
    for t in tensors:
        cols = t.shape[d] * inner
        t2 = t.reshape((outer, cols))
        for r in nl.affine_range(math.ceil(outer / TILE_P)):
            for c in nl.affine_range(math.ceil(cols / TILE_F)):
                i = r * TILE_P + ip
                j = c * TILE_F + jf
                valid = (i < outer) & (j < cols)
                tile = nl.load(t2[i, j], mask=valid)
                nl.store(o2[i, off + j], value=tile, mask=valid)
        off += cols
    return out
