"""Attention's separate PyTorch ops, one kernel each (the products are in linear.py: scores
q @ k^T = linear.bmm_nt(q, k), probabilities @ v = linear.bmm(p, v); the scale is
elementwise.unary; the softmax is softmax.softmax).

Scores are [..., Sq, Sk]: 128 query rows per tile on the partitions, 512 key columns per tile;
ragged tiles are masked on load and store.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

TILE_P = 128
TILE_F = 512


@nki.jit
def add_mask(scores, mask):
    """scores + mask, the mask broadcast to scores' shape as PyTorch broadcasts it: scores
    [B, H, Sq, Sk]; mask [B or 1, H or 1, Sq or 1, Sk] (an additive attention mask)."""
    B, H, Sq, Sk = scores.shape
    mB, mH, mQ, mK = mask.shape
    assert mK == Sk and mB in (1, B) and mH in (1, H) and mQ in (1, Sq), \
        "add_mask: the mask does not broadcast to the scores"
    out = nl.ndarray(scores.shape, dtype=scores.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    i0 = nl.arange(1)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            mb = b if mB > 1 else 0
            mh = h if mH > 1 else 0
            for r in nl.affine_range(math.ceil(Sq / TILE_P)):
                i = r * TILE_P + ip
                for c in nl.affine_range(math.ceil(Sk / TILE_F)):
                    j = c * TILE_F + jf
                    valid = (i < Sq) & (j < Sk)
                    t = nl.load(scores[b, h, i, j], mask=valid)
                    if mQ == 1:
                        mt = nl.load(mask[mb, mh, i0, j], mask=(j < Sk)).broadcast_to((TILE_P, TILE_F))
                    else:
                        mt = nl.load(mask[mb, mh, i, j], mask=valid)
                    nl.store(out[b, h, i, j], value=nl.add(t, mt, mask=valid), mask=valid)
    return out


@nki.jit
def causal_fill(scores, value=-math.inf):
    """scores.masked_fill(triu(ones(Sq, Sk), diagonal=1), value) over the last two dimensions:
    key j > query i gets `value` (-inf), as SDPA's is_causal (top-left aligned) masks it."""
    Sq, Sk = scores.shape[-2], scores.shape[-1]
    G = math.prod(scores.shape[:-2])
    out = nl.ndarray(scores.shape, dtype=scores.dtype, buffer=nl.shared_hbm)
    s3 = scores.reshape((G, Sq, Sk))
    o3 = out.reshape((G, Sq, Sk))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for g in nl.affine_range(G):
        for r in nl.affine_range(math.ceil(Sq / TILE_P)):
            i = r * TILE_P + ip
            for c in nl.affine_range(math.ceil(Sk / TILE_F)):
                j = c * TILE_F + jf
                valid = (i < Sq) & (j < Sk)
                t = nl.load(s3[g, i, j], mask=valid)
                # keep j <= i: (r*128 + p) - (c*512 + f) >= 0
                kept = nisa.affine_select((r * TILE_P + ip) - (c * TILE_F + jf) >= 0, t, value,
                                          mask=valid)
                nl.store(o3[g, i, j], value=kept, mask=valid)
    return out


@nki.jit
def repeat_kv(x, n_rep):
    """x.repeat_interleave(n_rep, dim=1) for x [B, Hkv, S, D]: head h of the result is x's head
    h // n_rep (grouped-query attention's k / v expansion)."""
    B, Hkv, S, D = x.shape
    out = nl.ndarray((B, Hkv * n_rep, S, D), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for b in nl.affine_range(B):
        for h in nl.affine_range(Hkv):
            for r in nl.affine_range(math.ceil(S / TILE_P)):
                i = r * TILE_P + ip
                for c in nl.affine_range(math.ceil(D / TILE_F)):
                    j = c * TILE_F + jf
                    valid = (i < S) & (j < D)
                    t = nl.load(x[b, h, i, j], mask=valid)
                    for k in nl.affine_range(n_rep):
                        nl.store(out[b, h * n_rep + k, i, j], value=t, mask=valid)
    return out
