# Single-token decode attention softmax(q kᵀ / √D) v for float32 q [B, 1, H, D] against a KV cache
# k, v [B, S, H, D] (the head-strided layout: cache row s of head h is k[b, s, h, :], H * D apart
# in HBM). Loops over B and H; per (b, h) the S/128 cache tiles of 128 rows k[b, rows, h, :], each
# loaded as it lies and transposed on the Tensor engine (`nl.transpose`, copied to SBUF);
# `nl.matmul(q, kᵀ)` (transpose_x=False: the [1, D] query row transposed there for the stationary
# side) gives 128 scores per tile, scaled by 1/√D, into a [1, S] score row; the softmax along it
# (nl.max, nl.exp, nl.sum, nl.divide), then p v accumulated over the cache tiles in one [1, D]
# PSUM tile (`acc += nl.matmul(p_block, v_block)`, p transposed on the Tensor engine; v[b, rows,
# h, :] read with the same strides). Re-creates the "kv_cache_attn" row of "Matmul and attention"
# in trn1-measurements.md (measured at q (4, 1, 32, 128), k, v (4, 2048, 32, 128): 16 cache tiles
# per (b, h), 11673 µs device p50 on trn1).
#
# entry: kv_cache_attn
# inputs: q=float32[1,1,4,64] k=float32[1,512,4,64] v=float32[1,512,4,64]
# reference:
#   s = np.einsum("bqhd,bshd->bhqs", q, k) / np.sqrt(q.shape[-1])
#   p = np.exp(s - s.max(axis=-1, keepdims=True))
#   p = p / p.sum(axis=-1, keepdims=True)
#   return np.einsum("bhqs,bshd->bqhd", p, v)
# tolerance: atol=1e-5 rtol=1e-4
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = 128  # cache rows per tile


@nki.jit
def kv_cache_attn(q, k, v):
    B, one, H, D = q.shape
    Bk, S, Hk, Dk = k.shape
    assert one == 1, "one query token"
    assert (Bk, Hk, Dk) == (B, H, D) and tuple(v.shape) == tuple(k.shape), "k and v must be [B, S, H, D]"
    assert S % TILE == 0 and D <= 128, "S must be a multiple of 128 and D <= 128"
    out = nl.ndarray((B, 1, H, D), dtype=q.dtype, buffer=nl.shared_hbm)
    scale = 1.0 / math.sqrt(D)

    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            qt = nl.load(q[b, :, h, :])  # [1, D]
            scores = nl.ndarray((1, S), dtype=nl.float32, buffer=nl.sbuf)
            for j in nl.affine_range(S // TILE):
                kt = nl.load(k[b, j * TILE:(j + 1) * TILE, h, :])  # [128, D]
                kT = nl.copy(nl.transpose(kt))  # [D, 128]
                scores[:, j * TILE:(j + 1) * TILE] = nl.multiply(nl.matmul(qt, kT, transpose_x=False), scale)

            row_max = nl.max(scores, axis=1, keepdims=True)
            e = nl.exp(nl.subtract(scores, row_max))
            p = nl.divide(e, nl.sum(e, axis=1, keepdims=True))

            acc = nl.zeros((1, D), nl.float32, buffer=nl.psum)
            for j in nl.affine_range(S // TILE):
                vt = nl.load(v[b, j * TILE:(j + 1) * TILE, h, :])  # [128, D]
                acc += nl.matmul(p[:, j * TILE:(j + 1) * TILE], vt, transpose_x=False)
            nl.store(out[b, :, h, :], value=nl.copy(acc))
    return out
