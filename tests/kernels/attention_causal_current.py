# Causal single-head attention on one 128-token tile, current dialect: softmax(q k^T / sqrt(d) +
# causal mask) v. q and k are transposed on the Tensor engine (through PSUM) so the matmul
# contracts over d on the partitions; affine_select keeps p - f >= 0 (key <= query); the row max
# (negated) becomes the exp's bias and the row sum comes out of the same activation.
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

import nki
import nki.isa as nisa
import nki.language as nl


def transposed(t, rows, cols):
    """[rows, cols] SBUF tile -> [cols, rows] SBUF tile through the Tensor engine."""
    ps = nl.ndarray((cols, rows), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=ps, data=t)
    sb = nl.ndarray((cols, rows), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps)
    return sb


@nki.jit
def attention_kernel(q, k, v):
    S, d = q.shape
    out = nl.ndarray((S, d), dtype=q.dtype, buffer=nl.shared_hbm)
    tiles = []
    for src in (q, k, v):
        t = nl.ndarray((S, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=src)
        tiles.append(t)
    qT = transposed(tiles[0], S, d)
    kT = transposed(tiles[1], S, d)

    s_psum = nl.ndarray((S, S), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=s_psum, stationary=qT, moving=kT)
    scores = nl.ndarray((S, S), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=scores, data=s_psum, op0=nl.multiply, operand0=1.0 / math.sqrt(d))
    masked = nl.ndarray((S, S), dtype=nl.float32, buffer=nl.sbuf)
    nisa.affine_select(dst=masked, pattern=[[-1, S]], channel_multiplier=1, on_true_tile=scores,
                       on_false_value=nl.fp32.min, cmp_op=nl.greater_equal)

    neg_max = nl.ndarray((S, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=masked, axis=1, negate=True, keepdims=True)
    e = nl.ndarray((S, S), dtype=nl.float32, buffer=nl.sbuf)
    total = nl.ndarray((S, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=e, op=nl.exp, data=masked, bias=neg_max, reduce_op=nl.add, reduce_res=total)
    inv = nl.ndarray((S, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=total)
    p = nl.ndarray((S, S), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=p, data=e, op0=nl.multiply, operand0=inv)

    pT = transposed(p, S, S)
    o_psum = nl.ndarray((S, d), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o_psum, stationary=pT, moving=tiles[2])
    o = nl.ndarray((S, d), dtype=q.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=o, src=o_psum)
    nisa.dma_copy(dst=out, src=o)
    return out
