# Causal single-head attention on one 128-token tile: softmax(q k^T / sqrt(d) + causal mask) v.
# q and k arrive transposed through the DMA (load_transpose2d) so the Tensor engine contracts over
# d on the partitions; affine_select keeps key j <= query i and writes the most negative float32
# elsewhere; the probabilities are transposed on the Tensor engine for the second matmul.
#
# entry: attention_kernel
# inputs: q=float32[128,64] k=float32[128,64] v=float32[128,64]
# reference:
#   s = q @ k.T / np.sqrt(q.shape[1])
#   s = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf)
#   p = np.exp(s - s.max(axis=1, keepdims=True))
#   return (p / p.sum(axis=1, keepdims=True)) @ v
# tolerance: atol=1e-5 rtol=1e-4
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def attention_kernel(q, k, v):
    S, d = q.shape
    out = nl.ndarray((S, d), dtype=q.dtype, buffer=nl.shared_hbm)
    qT = nl.load_transpose2d(q)                      # [d, S]
    kT = nl.load_transpose2d(k)                      # [d, S]
    vt = nl.load(v)                                  # [S, d]

    scores = nl.multiply(nl.matmul(qT, kT, transpose_x=True), 1.0 / math.sqrt(d))   # [S(q), S(k)]
    i_q, i_k = nl.mgrid[0:S, 0:S]
    masked = nisa.affine_select(i_k <= i_q, scores, nl.fp32.min)

    row_max = nl.max(masked, axis=1, keepdims=True)
    e = nl.exp(nl.subtract(masked, row_max))
    p = nl.divide(e, nl.sum(e, axis=1, keepdims=True))

    pT = nl.copy(nl.transpose(p))                    # [S(k), S(q)]
    o = nl.matmul(pT, vt, transpose_x=True)          # [S(q), d]
    nl.store(out, value=nl.copy(o))
    return out
