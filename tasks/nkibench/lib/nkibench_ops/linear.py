"""Matrix products on the Tensor engine, one kernel per PyTorch op: `a @ b` (matmul, bmm) and
nn.Linear (`x @ weight.T + bias`).

Every product accumulates in float32 in PSUM, [128, <=512] output tiles, a contraction step of 128
rows (a K that is not a multiple of 128 ends with one narrower step of exactly K % 128 rows: the
contraction must not see rows past the end). The stationary operand is transposed on the PE by
nl.matmul (transpose_x=False). Ragged M and N tiles are masked on load and store. The output is in
the first operand's dtype.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128   # output rows per tile (partitions of the result)
TILE_K = 128   # contraction step (partitions of both PE operands)
TILE_N = 512   # output columns per tile (one PSUM bank of float32)

# SBUF bytes per partition a transposed weight block may take (of 192 KiB).
_WT_BUDGET = 96 * 1024


def _k_steps(K):
    """(start, width) of every contraction step: full 128-row steps, then the K % 128 tail."""
    steps = [(k * TILE_K, TILE_K) for k in range(K // TILE_K)]
    if K % TILE_K:
        steps.append(((K // TILE_K) * TILE_K, K % TILE_K))
    return steps


def _matmul_nn(out3, a3, b3, B, M, K, N):
    """out3[i] = a3[i] @ b3[i] for i < B; a3 [B, M, K], b3 [B, K, N], out3 [B, M, N] (HBM)."""
    im = nl.arange(TILE_M)[:, None]
    jn = nl.arange(TILE_N)[None, :]
    steps = _k_steps(K)
    for i in nl.affine_range(B):
        for m in nl.affine_range(math.ceil(M / TILE_M)):
            rows = m * TILE_M + im
            for n in nl.affine_range(math.ceil(N / TILE_N)):
                cols = n * TILE_N + jn
                acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                for k0, kw in steps:
                    ik = nl.arange(kw)[:, None]
                    jk = nl.arange(kw)[None, :]
                    a_tile = nl.load(a3[i, rows, k0 + jk], mask=(rows < M))
                    b_tile = nl.load(b3[i, k0 + ik, cols], mask=(cols < N))
                    acc += nl.matmul(a_tile, b_tile)
                res = nl.copy(acc, dtype=out3.dtype)
                nl.store(out3[i, rows, cols], value=res, mask=(rows < M) & (cols < N))


@nki.jit
def matmul(a, b):
    """a [M, K] @ b [K, N] -> [M, N] (torch.matmul / torch.mm of 2-D operands)."""
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "matmul: the inner dimensions differ"
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    _matmul_nn(out.reshape((1, M, N)), a.reshape((1, M, K)), b.reshape((1, K, N)), 1, M, K, N)
    return out


@nki.jit
def bmm(a, b):
    """a [..., M, K] @ b [..., K, N] -> [..., M, N], the same leading (batch) dimensions on both
    (torch.bmm, or torch.matmul of batched operands without broadcasting)."""
    lead = tuple(a.shape[:-2])
    assert tuple(b.shape[:-2]) == lead, "bmm: the batch dimensions differ"
    M, K = a.shape[-2], a.shape[-1]
    K2, N = b.shape[-2], b.shape[-1]
    assert K == K2, "bmm: the inner dimensions differ"
    B = math.prod(lead)
    out = nl.ndarray(lead + (M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    _matmul_nn(out.reshape((B, M, N)), a.reshape((B, M, K)), b.reshape((B, K, N)), B, M, K, N)
    return out


def _block_width(K):
    """Columns of W^T kept in SBUF at once: 512, 256 or 128, the widest whose K/128 blocks fit the
    budget at 4 bytes an element (a 2-byte dtype takes half)."""
    kt = math.ceil(K / TILE_K)
    for nb in (512, 256, 128):
        if kt * nb * 4 <= _WT_BUDGET:
            return nb
    return 128


def _matmul_nt(out3, x3, w3, bias, B, M, K, N):
    """out3[i] = x3[i] @ w3[i].T (+ bias) for i < B; x3 [B, M, K], w3 [B, N, K] (HBM), bias [N] or
    None. For each block of NB columns, w3[i]'s [128, 128] blocks are transposed once on the PE
    into an SBUF-resident W^T [K, NB]; x's row tiles then stream through nl.matmul."""
    steps = _k_steps(K)
    KT = len(steps)
    NB = _block_width(K)
    ip = nl.arange(TILE_M)[:, None]
    jp = nl.arange(TILE_M)[None, :]
    jb = nl.arange(NB)[None, :]
    i0 = nl.arange(1)[:, None]
    bias2 = bias.reshape((1, N)) if bias is not None else None
    for i in nl.affine_range(B):
        for nb in nl.affine_range(math.ceil(N / NB)):
            cols = nb * NB + jb
            # W^T for columns [nb*NB, nb*NB + NB): KT blocks of [kw, NB].
            wT = nl.ndarray((KT, nl.par_dim(TILE_K), NB), dtype=w3.dtype, buffer=nl.sbuf)
            for kt in nl.static_range(KT):   # unrolled: the tail step has its own width
                k0, kw = steps[kt]
                ik = nl.arange(kw)[:, None]
                jk = nl.arange(kw)[None, :]
                for s in nl.affine_range(NB // TILE_M):
                    wrows = nb * NB + s * TILE_M + ip
                    w_tile = nl.load(w3[i, wrows, k0 + jk], mask=(wrows < N))    # [128 n, kw]
                    t = nl.transpose(w_tile)                                    # [kw, 128 n]
                    wT[kt, ik, s * TILE_M + jp] = nl.copy(t, dtype=w3.dtype)
            if bias2 is not None:
                b_tile = nl.load(bias2[i0, cols], mask=(cols < N)).broadcast_to((TILE_M, NB))
            for m in nl.affine_range(math.ceil(M / TILE_M)):
                rows = m * TILE_M + ip
                acc = nl.zeros((TILE_M, NB), dtype=nl.float32, buffer=nl.psum)
                for kt in nl.static_range(KT):   # unrolled: the tail step has its own width
                    k0, kw = steps[kt]
                    ik = nl.arange(kw)[:, None]
                    jk = nl.arange(kw)[None, :]
                    x_tile = nl.load(x3[i, rows, k0 + jk], mask=(rows < M))         # [128 m, kw]
                    acc += nl.matmul(x_tile, wT[kt, ik, jb])
                if bias2 is not None:
                    res = nl.add(acc, b_tile, dtype=out3.dtype)
                else:
                    res = nl.copy(acc, dtype=out3.dtype)
                nl.store(out3[i, rows, cols], value=res, mask=(rows < M) & (cols < N))


@nki.jit
def linear(x, weight, bias=None):
    """nn.Linear: x [..., K] @ weight[N, K].T (+ bias[N]) -> [..., N], in x's dtype."""
    K = x.shape[-1]
    N, K2 = weight.shape
    assert K == K2, "linear: x's last dimension differs from the weight's in_features"
    if bias is not None:
        assert tuple(bias.shape) == (N,), "linear: the bias must have out_features values"
    lead = tuple(x.shape[:-1])
    M = math.prod(lead)
    out = nl.ndarray(lead + (N,), dtype=x.dtype, buffer=nl.shared_hbm)
    _matmul_nt(out.reshape((1, M, N)), x.reshape((1, M, K)), weight.reshape((1, N, K)), bias,
               1, M, K, N)
    return out


@nki.jit
def bmm_nt(a, b):
    """a [..., M, K] @ b[..., N, K].transpose(-2, -1) -> [..., M, N], the same leading dimensions
    on both (torch.matmul(a, b.transpose(-2, -1)): attention scores q @ k^T)."""
    lead = tuple(a.shape[:-2])
    assert tuple(b.shape[:-2]) == lead, "bmm_nt: the batch dimensions differ"
    M, K = a.shape[-2], a.shape[-1]
    N, K2 = b.shape[-2], b.shape[-1]
    assert K == K2, "bmm_nt: the inner dimensions differ"
    B = math.prod(lead)
    out = nl.ndarray(lead + (M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    _matmul_nt(out.reshape((B, M, N)), a.reshape((B, M, K)), b.reshape((B, N, K)), None,
               B, M, K, N)
    return out
