"""Losses, one kernel each: nn.CrossEntropyLoss (mean over rows) to a 0-d result.

The rows of the logits go on the partitions, 128 per tile (the last, partial tile is its own,
smaller tile, its size known when the kernel is traced, so no lane outside the tensor takes part).
A row may be as long as a vocabulary, so it is walked in column chunks: a running max and a
running sum of exp(x - max) (the old sum rescaled by exp(old max - new max) when the max grows),
and the target's logit picked out of the chunk that holds it by comparing a column-number tile
(nisa.iota) with the row's target. The per-row losses lse - x[target] are summed across the
partitions by a matmul with a ones vector into one [1, 1] PSUM tile, over all row tiles, and the
sum is scaled by 1 / rows.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_P = 128
CHUNK = 2048    # columns per tile: [128, 2048] float32 is 8 KiB per partition


def _row_losses(logits, t2, start, n, col):
    """[n, 1] float32: logsumexp(logits[r, :]) - logits[r, t2[r]] for rows start .. start+n-1."""
    V = logits.shape[1]
    ip = nl.arange(n)[:, None]
    j0 = nl.arange(1)[None, :]
    jf = nl.arange(CHUNK)[None, :]
    i = start + ip
    tgt = nl.copy(nl.load(t2[i, j0]), dtype=nl.float32)          # [n, 1] target column
    run_max = nl.full((n, 1), -3.0e38, dtype=nl.float32, buffer=nl.sbuf)
    run_sum = nl.zeros((n, 1), dtype=nl.float32, buffer=nl.sbuf)
    picked = nl.zeros((n, 1), dtype=nl.float32, buffer=nl.sbuf)
    cols = col.broadcast_to((n, CHUNK))
    for c in nl.sequential_range(math.ceil(V / CHUNK)):
        j = c * CHUNK + jf
        m = j < V
        tile = nl.load(logits[i, j], mask=m, dtype=nl.float32)
        new_max = nl.maximum(run_max, nl.max(tile, axis=1, keepdims=True, mask=m))
        e = nl.exp(nl.subtract(tile, new_max, mask=m), mask=m)
        chunk_sum = nl.sum(e, axis=1, keepdims=True, mask=m)
        rescale = nl.exp(nl.subtract(run_max, new_max))             # the old sum in the new scale
        run_sum[...] = nl.add(nl.multiply(run_sum, rescale), chunk_sum)
        run_max[...] = nl.copy(new_max)
        # the target's logit, if it lies in this chunk: (column == target) * x, summed over the row
        hit = nl.equal(cols, nl.subtract(tgt, c * CHUNK), mask=m, dtype=nl.float32)
        chunk_pick = nl.sum(nl.multiply(hit, tile, mask=m), axis=1, keepdims=True, mask=m)
        picked[...] = nl.add(picked, chunk_pick)
    lse = nl.add(run_max, nl.log(run_sum))
    return nl.subtract(lse, picked)


@nki.jit
def cross_entropy(logits, targets):
    """nn.CrossEntropyLoss() (reduction 'mean', no weights, no label smoothing) of logits [N, C]
    and integer class targets [N] (int32, each in [0, C)): mean over rows of
    logsumexp(logits[r]) - logits[r, targets[r]]. The output is a 0-d tensor of the logits' dtype."""
    N, V = logits.shape
    out = nl.ndarray((), dtype=logits.dtype, buffer=nl.shared_hbm)
    t2 = targets.reshape((N, 1))
    col = nisa.iota(nl.arange(CHUNK)[None, :], dtype=nl.float32)   # [1, CHUNK]: 0, 1, ..., CHUNK-1
    ones = nl.ones((TILE_P, 1), dtype=nl.float32)
    total = nl.zeros((1, 1), dtype=nl.float32, buffer=nl.psum)
    full = N // TILE_P
    for t in nl.affine_range(full):
        losses = _row_losses(logits, t2, t * TILE_P, TILE_P, col)
        total += nl.matmul(ones, losses, transpose_x=True)        # [1, 1]: sum over 128 partitions
    n = N % TILE_P
    if n:
        losses = _row_losses(logits, t2, full * TILE_P, n, col)
        i_n = nl.arange(n)[:, None]
        total += nl.matmul(ones[i_n, nl.arange(1)[None, :]], losses, transpose_x=True)
    mean = nl.multiply(total, 1.0 / N, dtype=out.dtype)
    nl.store(out.reshape((1, 1)), value=mean)
    return out
