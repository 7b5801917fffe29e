# Causal multi-head attention softmax(q kᵀ / √D + causal mask) v for float32 q, k, v [B, H, S, D]:
# loops over B and H and the S/128 query tiles of 128 rows; each query tile sees all S keys in
# 128-column blocks. Per key block: the q and k tiles [128, D] are loaded as they lie in HBM, k
# is transposed on the Tensor engine (`nl.transpose`, copied to SBUF) and `nl.matmul(q, kᵀ)`
# (transpose_x=False) transposes q there for the stationary side; scale 1/√D, and
# `nisa.affine_select` keeps key <= query (an index-tile predicate) and writes the most negative
# float32 elsewhere, into the query tile's [128, S] score row. Then the row softmax (nl.max, nl.exp,
# nl.sum, nl.divide) and p v accumulated over the key blocks in one PSUM tile
# (`acc += nl.matmul(p_block, v_block)`, p transposed on the Tensor engine). Every block is
# computed, masked ones included. Re-creates the "causal_attn_medium" row of "Matmul and
# attention" in trn1-measurements.md (measured at q, k, v (4, 12, 256, 64): 2 query tiles per
# head, 1287 µs device p50 on trn1).
#
# entry: causal_attn_medium
# inputs: q=float32[1,2,256,64] k=float32[1,2,256,64] v=float32[1,2,256,64]
# reference:
#   S = q.shape[2]
#   s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
#   s = np.where(np.tril(np.ones((S, S))) > 0, s, -np.inf)
#   p = np.exp(s - s.max(axis=-1, keepdims=True))
#   return (p / p.sum(axis=-1, keepdims=True)) @ v
# tolerance: atol=1e-5 rtol=1e-4
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE = 128  # query rows per tile and keys per block


@nki.jit
def causal_attn_medium(q, k, v):
    B, H, S, D = q.shape
    assert tuple(k.shape) == (B, H, S, D) and tuple(v.shape) == (B, H, S, D), "q, k, v must have one shape"
    assert S % TILE == 0 and D <= 128, "S must be a multiple of 128 and D <= 128"
    out = nl.ndarray((B, H, S, D), dtype=q.dtype, buffer=nl.shared_hbm)
    scale = 1.0 / math.sqrt(D)
    i_q, i_k = nl.mgrid[0:TILE, 0:TILE]

    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            for i in nl.affine_range(S // TILE):
                qt = nl.load(q[b, h, i * TILE:(i + 1) * TILE, :])  # [128, D]
                scores = nl.ndarray((TILE, S), dtype=nl.float32, buffer=nl.sbuf)
                for j in nl.affine_range(S // TILE):
                    kt = nl.load(k[b, h, j * TILE:(j + 1) * TILE, :])  # [128, D]
                    kT = nl.copy(nl.transpose(kt))  # [D, 128]
                    s = nl.multiply(nl.matmul(qt, kT, transpose_x=False), scale)
                    # key j*128 + i_k is visible from query i*128 + i_q when it is not later
                    scores[:, j * TILE:(j + 1) * TILE] = nisa.affine_select(
                        i * TILE + i_q >= j * TILE + i_k, s, nl.fp32.min)

                row_max = nl.max(scores, axis=1, keepdims=True)
                e = nl.exp(nl.subtract(scores, row_max))
                p = nl.divide(e, nl.sum(e, axis=1, keepdims=True))

                acc = nl.zeros((TILE, D), nl.float32, buffer=nl.psum)
                for j in nl.affine_range(S // TILE):
                    vt = nl.load(v[b, h, j * TILE:(j + 1) * TILE, :])  # [128, D]
                    acc += nl.matmul(p[:, j * TILE:(j + 1) * TILE], vt, transpose_x=False)
                nl.store(out[b, h, i * TILE:(i + 1) * TILE, :], value=nl.copy(acc))
    return out
