# Grouped-query attention softmax(q kᵀ / √D) v (no mask) for float32 q [B, H, S, D] and k, v
# [B, Hkv, Sk, D]: query head h reads kv head h // (H / Hkv) (h // 4 at the measured shape). Loops
# over B and H and the S/128 query tiles of 128 rows; each query tile sees all Sk keys in
# 128-key blocks: the q and k tiles [128, D] are loaded as they lie in HBM, k is transposed on the
# Tensor engine (`nl.transpose`, copied to SBUF) and `nl.matmul(q, kᵀ)` (transpose_x=False)
# transposes q there for the stationary side; qkᵀ and the scale 1/√D fill the tile's [128, Sk]
# score row;
# the row softmax (nl.max, nl.exp, nl.sum, nl.divide), then p v accumulated over the key blocks in
# one PSUM tile (`acc += nl.matmul(p_block, v_block)`, p transposed on the Tensor engine).
# Re-creates the "gqa_large" row of "Matmul and attention" in trn1-measurements.md (measured at
# q (2, 32, 512, 128), k, v (2, 8, 512, 128): 4 query tiles per head over 512 keys, 5682 µs
# device p50 on trn1).
#
# entry: gqa_large
# inputs: q=float32[1,8,256,64] k=float32[1,2,256,64] v=float32[1,2,256,64]
# reference:
#   g = q.shape[1] // k.shape[1]
#   kk = np.repeat(k, g, axis=1)
#   vv = np.repeat(v, g, axis=1)
#   s = q @ np.swapaxes(kk, -1, -2) / np.sqrt(q.shape[-1])
#   p = np.exp(s - s.max(axis=-1, keepdims=True))
#   return (p / p.sum(axis=-1, keepdims=True)) @ vv
# tolerance: atol=1e-5 rtol=1e-4
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = 128  # query rows per tile and keys per block


@nki.jit
def gqa_large(q, k, v):
    B, H, S, D = q.shape
    Bk, Hkv, Sk, Dk = k.shape
    assert (Bk, Dk) == (B, D) and tuple(v.shape) == tuple(k.shape), "k and v must be [B, Hkv, Sk, D]"
    assert H % Hkv == 0, "the query heads must split evenly into kv groups"
    assert S % TILE == 0 and Sk % TILE == 0 and D <= 128, "S, Sk multiples of 128, D <= 128"
    group = H // Hkv
    out = nl.ndarray((B, H, S, D), dtype=q.dtype, buffer=nl.shared_hbm)
    scale = 1.0 / math.sqrt(D)

    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            kvh = h // group
            for i in nl.affine_range(S // TILE):
                qt = nl.load(q[b, h, i * TILE:(i + 1) * TILE, :])  # [128, D]
                scores = nl.ndarray((TILE, Sk), dtype=nl.float32, buffer=nl.sbuf)
                for j in nl.affine_range(Sk // TILE):
                    kt = nl.load(k[b, kvh, j * TILE:(j + 1) * TILE, :])  # [128, D]
                    kT = nl.copy(nl.transpose(kt))  # [D, 128]
                    scores[:, j * TILE:(j + 1) * TILE] = nl.multiply(nl.matmul(qt, kT, transpose_x=False), scale)

                row_max = nl.max(scores, axis=1, keepdims=True)
                e = nl.exp(nl.subtract(scores, row_max))
                p = nl.divide(e, nl.sum(e, axis=1, keepdims=True))

                acc = nl.zeros((TILE, D), nl.float32, buffer=nl.psum)
                for j in nl.affine_range(Sk // TILE):
                    vt = nl.load(v[b, kvh, j * TILE:(j + 1) * TILE, :])  # [128, D]
                    acc += nl.matmul(p[:, j * TILE:(j + 1) * TILE], vt, transpose_x=False)
                nl.store(out[b, h, i * TILE:(i + 1) * TILE, :], value=nl.copy(acc))
    return out
