# Multi-head attention softmax(q kᵀ / √D + mask) v for float32 q, k, v [B, H, S, D] with an
# additive mask [B, 1, 1, S], one [S, S] score tile per head (S <= 128): loops over B and H; the
# q, k, v tiles [S, D] are loaded as they lie in HBM; for qkᵀ, k is transposed on the Tensor engine
# (`nl.transpose`, copied to SBUF) and `nl.matmul(q, kᵀ)` (transpose_x=False) transposes q there
# for the stationary side; the scores are scaled by 1/√D, the mask row is added (broadcast across
# the partitions), the row softmax takes nl.max / nl.exp / nl.sum / nl.divide along the free axis,
# and `nl.matmul(p, v)` (transpose_x=False: p transposed on the Tensor engine) gives the head's
# output. Re-creates the
# "attn_full_medium" row of "Matmul and attention" in trn1-measurements.md (measured at q, k, v
# (4, 12, 128, 64) with a mask (4, 1, 1, 128) of zeros: 356 µs device p50 on trn1). The suite draws
# a non-zero mask so that the addition is checked.
#
# entry: attn_full_medium
# inputs: q=float32[1,2,128,64] k=float32[1,2,128,64] v=float32[1,2,128,64] mask=float32[1,1,1,128]~uniform(-2,0)
# reference:
#   s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + mask
#   p = np.exp(s - s.max(axis=-1, keepdims=True))
#   return (p / p.sum(axis=-1, keepdims=True)) @ v
# tolerance: atol=1e-5 rtol=1e-4
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def attn_full_medium(q, k, v, mask):
    B, H, S, D = q.shape
    assert tuple(k.shape) == (B, H, S, D) and tuple(v.shape) == (B, H, S, D), "q, k, v must have one shape"
    assert tuple(mask.shape) == (B, 1, 1, S), "the mask is [B, 1, 1, S]"
    assert S <= 128 and D <= 128, "one [S, S] score tile per head: S, D <= 128"
    out = nl.ndarray((B, H, S, D), dtype=q.dtype, buffer=nl.shared_hbm)
    scale = 1.0 / math.sqrt(D)

    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            qt = nl.load(q[b, h, :, :])  # [S, D]
            kt = nl.load(k[b, h, :, :])  # [S, D]
            vt = nl.load(v[b, h, :, :])  # [S, D]
            m = nl.load(mask[b, 0, :, :])  # [1, S]

            kT = nl.copy(nl.transpose(kt))  # [D, S]
            scores = nl.multiply(nl.matmul(qt, kT, transpose_x=False), scale)  # [S(q), S(k)]
            scores = nl.add(scores, m)

            row_max = nl.max(scores, axis=1, keepdims=True)
            e = nl.exp(nl.subtract(scores, row_max))
            p = nl.divide(e, nl.sum(e, axis=1, keepdims=True))

            o = nl.matmul(p, vt, transpose_x=False)  # [S(q), D]
            nl.store(out[b, h, :, :], value=nl.copy(o))
    return out
