"""Head layout of sequence models (Level-3 transformer blocks), one kernel per PyTorch op: the
`.view(B, S, H, Dh).transpose(1, 2)` that splits a projection into heads (made contiguous, as
torch.matmul does with it) and the `.transpose(1, 2).contiguous().view(B, S, H * Dh)` that merges
them back.

A head's Dh (<= 512) columns are one tile's free axis; 128 sequence positions per tile on the
partitions; the ragged last tile of the sequence is masked on load and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128


@nki.jit
def split_heads(x, n_heads, part=0, parts=1):
    """x [B, S, parts * n_heads * Dh] -> [B, n_heads, S, Dh]: head h of the result is the columns
    part * n_heads * Dh + h * Dh + [0, Dh) of x (parts = 1: `x.view(B, S, H, Dh).transpose(1, 2)`;
    parts = 3, part = 0/1/2: q, k or v of a fused QKV projection,
    `x.reshape(B, S, 3, H, Dh).permute(2, 0, 3, 1, 4)[part]`), made contiguous."""
    B, S, C = x.shape
    assert C % (parts * n_heads) == 0, "split_heads: the width does not split into the heads"
    Dh = C // (parts * n_heads)
    assert Dh <= 512, "split_heads: a head must fit one tile (Dh <= 512)"
    out = nl.ndarray((B, n_heads, S, Dh), dtype=x.dtype, buffer=nl.shared_hbm)
    base = part * n_heads * Dh
    ip = nl.arange(TILE_P)[:, None]
    jd = nl.arange(Dh)[None, :]
    for b in nl.affine_range(B):
        for h in nl.affine_range(n_heads):
            for r in nl.affine_range(math.ceil(S / TILE_P)):
                i = r * TILE_P + ip
                t = nl.load(x[b, i, base + h * Dh + jd], mask=(i < S))
                nl.store(out[b, h, i, jd], value=t, mask=(i < S))
    return out


@nki.jit
def merge_heads(x):
    """x [B, H, S, Dh] -> [B, S, H * Dh]: `x.transpose(1, 2).contiguous().view(B, S, H * Dh)`."""
    B, H, S, Dh = x.shape
    assert Dh <= 512, "merge_heads: a head must fit one tile (Dh <= 512)"
    out = nl.ndarray((B, S, H * Dh), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    jd = nl.arange(Dh)[None, :]
    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            for r in nl.affine_range(math.ceil(S / TILE_P)):
                i = r * TILE_P + ip
                t = nl.load(x[b, h, i, jd], mask=(i < S))
                nl.store(out[b, i, h * Dh + jd], value=t, mask=(i < S))
    return out
