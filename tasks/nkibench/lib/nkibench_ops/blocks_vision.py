"""Building blocks for the Level-3 CNN, SSM, vision and specialised tasks (L3_025-L3_050): the
PyTorch operations of those models that the other modules lack, one plain kernel each, HBM to HBM.

- swap12: x.transpose(1, 2).contiguous() of a 4-D tensor (attention's head split and merge, a
  Swin window partition and its reverse, a KV cache's [B, L, H, D] -> [B, H, L, D]);
- split_qkv: a fused qkv projection's reshape(B, S, 3, H, Dh).permute(2, 0, 3, 1, 4) into
  contiguous q, k, v [B, H, S, Dh];
- patches: the im2col of a patch embedding's Conv2d(kernel_size=p, stride=p) (its GEMM is
  linear.linear), which gives the tokens [B, P, D] that flatten(2).transpose(1, 2) makes;
- cls_cat: torch.cat([cls_token.expand(B, -1, -1), tokens], dim=1);
- causal_dwconv1d: Mamba's depthwise Conv1d(k, padding=k-1)[..., :L] on a channels-last slice;
- outer_scale / sum_last: dt.unsqueeze(-1) * A and x.sum(-1) over a small last dimension;
- unary_cols: an elementwise function of a column slice (a chunk of the last dimension);
- matmul_expert, top2_gate, add_scaled_rows: a mixture of experts' per-expert product x @ w[e],
  its top-2 routing weights, and the weighted accumulation of the expert outputs.

Tiles are 128 partitions by at most 512 free elements; ragged tiles are masked or sliced to size.
"""
import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_F = 512


def _chunks(total, size):
    """[(start, length)] covering range(total) in pieces of at most `size`."""
    return [(s, min(size, total - s)) for s in range(0, total, size)]


@nki.jit
def swap12(x):
    """x [A, B, C, D] -> x.transpose(1, 2).contiguous() [A, C, B, D]. The rows of a tile run over
    whichever of B and C needs fewer tiles; each tile is one strided load and one strided store."""
    A, B, C, D = x.shape
    out = nl.ndarray((A, C, B, D), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    n_dt = math.ceil(D / TILE_F)
    if C * math.ceil(B / TILE_P) <= B * math.ceil(C / TILE_P):
        # rows over B: x[a, b-tile, c, :] -> out[a, c, b-tile, :]
        for a in nl.affine_range(A):
            for c in nl.affine_range(C):
                for r in nl.affine_range(math.ceil(B / TILE_P)):
                    i = r * TILE_P + ip
                    for f in nl.affine_range(n_dt):
                        j = f * TILE_F + jf
                        valid = (i < B) & (j < D)
                        t = nl.load(x[a, i, c, j], mask=valid)
                        nl.store(out[a, c, i, j], value=t, mask=valid)
    else:
        # rows over C: x[a, b, c-tile, :] -> out[a, c-tile, b, :]
        for a in nl.affine_range(A):
            for b in nl.affine_range(B):
                for r in nl.affine_range(math.ceil(C / TILE_P)):
                    i = r * TILE_P + ip
                    for f in nl.affine_range(n_dt):
                        j = f * TILE_F + jf
                        valid = (i < C) & (j < D)
                        t = nl.load(x[a, b, i, j], mask=valid)
                        nl.store(out[a, i, b, j], value=t, mask=valid)
    return out


@nki.jit
def split_qkv(qkv, n_heads):
    """qkv [B, S, 3 * H * Dh] (a fused projection's output) ->
    qkv.reshape(B, S, 3, H, Dh).permute(2, 0, 3, 1, 4): the contiguous q, k, v, each [B, H, S, Dh]."""
    B, S, E3 = qkv.shape
    E = E3 // 3
    H = n_heads
    Dh = E // H
    assert 3 * H * Dh == E3, "split_qkv: the last dimension is not 3 * n_heads * head_dim"
    q = nl.ndarray((B, H, S, Dh), dtype=qkv.dtype, buffer=nl.shared_hbm)
    k = nl.ndarray((B, H, S, Dh), dtype=qkv.dtype, buffer=nl.shared_hbm)
    v = nl.ndarray((B, H, S, Dh), dtype=qkv.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for b in nl.affine_range(B):
        for h in nl.affine_range(H):
            for r in nl.affine_range(math.ceil(S / TILE_P)):
                i = r * TILE_P + ip
                for f in nl.affine_range(math.ceil(Dh / TILE_F)):
                    j = f * TILE_F + jf
                    valid = (i < S) & (j < Dh)
                    tq = nl.load(qkv[b, i, h * Dh + j], mask=valid)
                    nl.store(q[b, h, i, j], value=tq, mask=valid)
                    tk = nl.load(qkv[b, i, E + h * Dh + j], mask=valid)
                    nl.store(k[b, h, i, j], value=tk, mask=valid)
                    tv = nl.load(qkv[b, i, 2 * E + h * Dh + j], mask=valid)
                    nl.store(v[b, h, i, j], value=tv, mask=valid)
    return q, k, v


@nki.jit
def patches(x, patch):
    """x [B, C, H, W] -> its non-overlapping patch x patch patches as rows, [B, GH * GW, C * patch *
    patch] (GH = H // patch, GW = W // patch; trailing pixels dropped, as a stride-`patch`
    convolution drops them): row gh * GW + gw holds x[b, c, gh*patch + kh, gw*patch + kw] at column
    (c * patch + kh) * patch + kw. The im2col half of a patch embedding's Conv2d(kernel_size=patch,
    stride=patch); linear.linear with the weight seen as [C_out, C * patch * patch] is the other.
    One DMA per (image, patch row, channel), the patches on the partitions."""
    B, C, H, W = x.shape
    GH, GW = H // patch, W // patch
    K = C * patch * patch
    out = nl.ndarray((B, GH * GW, K), dtype=x.dtype, buffer=nl.shared_hbm)
    o4 = out.reshape((B, GH * GW, C, patch * patch))
    for (g0, gs) in _chunks(GW, TILE_P):
        ig = nl.arange(gs)[:, None, None]
        ih = nl.arange(patch)[None, :, None]
        iw = nl.arange(patch)[None, None, :]
        for b in nl.affine_range(B):
            for gh in nl.affine_range(GH):
                for c in nl.affine_range(C):
                    t = nl.load(x[b, c, gh * patch + ih, (g0 + ig) * patch + iw])     # [gs, p, p]
                    nl.store(o4[b, gh * GW + g0 + ig, c, ih * patch + iw], value=t)
    return out


@nki.jit
def cls_cat(tokens, cls_token):
    """torch.cat([cls_token.expand(B, -1, -1), tokens], dim=1) for tokens [B, P, D] and cls_token
    [1, 1, D]: [B, 1 + P, D]."""
    B, P, D = tokens.shape
    out = nl.ndarray((B, 1 + P, D), dtype=tokens.dtype, buffer=nl.shared_hbm)
    i0 = nl.arange(1)[:, None]
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    cls2 = cls_token.reshape((1, D))
    for c in nl.affine_range(math.ceil(D / TILE_F)):
        j = c * TILE_F + jf
        ct = nl.load(cls2[i0, j], mask=(j < D))
        for b in nl.affine_range(B):
            nl.store(out[b, i0, j], value=ct, mask=(j < D))
            for r in nl.affine_range(math.ceil(P / TILE_P)):
                i = r * TILE_P + ip
                valid = (i < P) & (j < D)
                t = nl.load(tokens[b, i, j], mask=valid)
                nl.store(out[b, 1 + i, j], value=t, mask=valid)
    return out


@nki.jit
def causal_dwconv1d(x, weight, bias, col0=0):
    """Mamba's causal depthwise convolution on a channels-last slice: x [B, L, X], weight [C, 1, K],
    bias [C]; out [B, L, C] with
    out[b, t, c] = bias[c] + sum_k weight[c, 0, k] * x[b, t - (K - 1) + k, col0 + c]
    (x zero before t = 0): x[..., col0:col0+C].transpose(1, 2) through
    nn.Conv1d(C, C, K, padding=K-1, groups=C), cut to its first L outputs, transposed back.
    Tokens on the partitions, channels along the free axis; the K shifted token bands are loaded
    into zeroed tiles."""
    B, L, X = x.shape
    C, one, K = weight.shape
    assert one == 1 and col0 + C <= X, "causal_dwconv1d: weight must be [C, 1, K] within x"
    out = nl.ndarray((B, L, C), dtype=x.dtype, buffer=nl.shared_hbm)
    w2 = weight.reshape((C, K))
    b2 = bias.reshape((1, C))
    i0 = nl.arange(1)[:, None]
    for (c0, cs) in _chunks(C, TILE_F):
        jc = nl.arange(cs)[None, :]
        # w_k[0, f] = weight[c0 + f, 0, k]: a strided row per tap
        wk = []
        for k in range(K):
            wk.append(nl.load(w2[c0 + jc, k + i0]).broadcast_to((TILE_P, cs)))
        bt = nl.load(b2[i0, c0 + jc]).broadcast_to((TILE_P, cs))
        for b in nl.affine_range(B):
            for (t0, ts) in _chunks(L, TILE_P):
                acc = bt[0:ts, :]
                for k in range(K):
                    shift = K - 1 - k
                    lo = max(0, t0 - shift)
                    hi = t0 + ts - shift
                    if hi <= lo:
                        continue
                    if lo == t0 - shift:
                        band = nl.load(x[b, lo:hi, col0 + c0:col0 + c0 + cs])
                    else:
                        # the first rows fall before t = 0: a masked load, zeros selected in
                        ip = nl.arange(ts)[:, None]
                        rows = t0 - shift + ip
                        t = nl.load(x[b, rows, col0 + c0 + jc], mask=(rows >= 0))
                        band = nisa.affine_select(rows + 0 * jc >= 0, t, 0.0)
                    acc = nl.add(acc, nl.multiply(band, wk[k][0:ts, :]))
                nl.store(out[b, t0:t0 + ts, c0:c0 + cs], value=acc)
    return out


@nki.jit
def outer_scale(dt, A):
    """dt [..., C], A [C, N] -> dt.unsqueeze(-1) * A: out[..., c, n] = dt[..., c] * A[c, n],
    [..., C, N]."""
    C, N = A.shape
    assert dt.shape[-1] == C, "outer_scale: dt's last dimension must match A's rows"
    R = math.prod(dt.shape[:-1])
    out = nl.ndarray(tuple(dt.shape) + (N,), dtype=dt.dtype, buffer=nl.shared_hbm)
    o3 = out.reshape((R, C, N))
    a3 = A.reshape((1, C, N))
    CC = max(1, min(C, 2048 // N))          # channels per tile: CC * N free elements
    dt3 = dt.reshape((R, C, 1))
    ip3 = nl.arange(TILE_P)[:, None, None]
    i03 = nl.arange(1)[:, None, None]
    jz = nl.arange(1)[None, None, :]
    for (c0, cs) in _chunks(C, CC):
        jc = nl.arange(cs)[None, :, None]
        jn = nl.arange(N)[None, None, :]
        at = nl.load(a3[i03, c0 + jc, jn]).broadcast_to((TILE_P, cs, N))
        for r in nl.affine_range(math.ceil(R / TILE_P)):
            i = r * TILE_P + ip3
            d = nl.load(dt3[i, c0 + jc, jz], mask=(i < R))                      # [128, cs, 1]
            nl.store(o3[i, c0 + jc, jn], value=nl.multiply(d, at), mask=(i < R))
    return out


@nki.jit
def sum_last(x):
    """x [..., C, N] -> x.sum(-1) [..., C], for a small last dimension N: the rows of [R, C, N] on
    the partitions, a free-axis reduction over N."""
    C, N = x.shape[-2], x.shape[-1]
    R = math.prod(x.shape[:-2])
    out = nl.ndarray(tuple(x.shape[:-1]), dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((R, C, N))
    o2 = out.reshape((R, C))
    CC = max(1, min(C, 2048 // N))
    ip3 = nl.arange(TILE_P)[:, None, None]
    ip = nl.arange(TILE_P)[:, None]
    for (c0, cs) in _chunks(C, CC):
        jc3 = nl.arange(cs)[None, :, None]
        jn = nl.arange(N)[None, None, :]
        jc = nl.arange(cs)[None, :]
        for r in nl.affine_range(math.ceil(R / TILE_P)):
            i3 = r * TILE_P + ip3
            i = r * TILE_P + ip
            t = nl.load(x3[i3, c0 + jc3, jn], mask=(i3 < R))
            s = nl.sum(t, axis=2)                                   # [128, cs]
            nl.store(o2[i, c0 + jc], value=s, mask=(i < R))
    return out


@nki.jit
def unary_cols(x, col0, ncols, fn):
    """fn(x[..., col0:col0 + ncols]) as a contiguous [..., ncols] tensor: an elementwise function of
    a chunk of the last dimension (torch.chunk gives a view; the function reads it in place)."""
    X = x.shape[-1]
    assert col0 + ncols <= X, "unary_cols: the slice runs past the last dimension"
    R = math.prod(x.shape[:-1])
    out = nl.ndarray(tuple(x.shape[:-1]) + (ncols,), dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((R, X))
    o2 = out.reshape((R, ncols))
    ip = nl.arange(TILE_P)[:, None]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(R / TILE_P)):
        i = r * TILE_P + ip
        for c in nl.affine_range(math.ceil(ncols / TILE_F)):
            j = c * TILE_F + jf
            valid = (i < R) & (j < ncols)
            t = nl.load(x2[i, col0 + j], mask=valid)
            nl.store(o2[i, j], value=fn(t), mask=valid)
    return out


@nki.jit
def matmul_expert(a, w, e):
    """a [M, K] @ w[e] for w [E, K, N] and a Python int e: one expert's weight matrix (a
    stacked nn.Parameter indexed by expert). float32 accumulation in PSUM, [128, 512] output tiles,
    128-row contraction steps (the K % 128 tail its own step)."""
    M, K = a.shape
    E, K2, N = w.shape
    assert K == K2 and 0 <= e < E, "matmul_expert: the shapes do not match"
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    im = nl.arange(TILE_P)[:, None]
    jn = nl.arange(TILE_F)[None, :]
    for m in nl.affine_range(math.ceil(M / TILE_P)):
        rows = m * TILE_P + im
        for n in nl.affine_range(math.ceil(N / TILE_F)):
            cols = n * TILE_F + jn
            acc = nl.zeros((TILE_P, TILE_F), dtype=nl.float32, buffer=nl.psum)
            for (k0, kw) in _chunks(K, TILE_P):
                ik = nl.arange(kw)[:, None]
                jk = nl.arange(kw)[None, :]
                a_tile = nl.load(a[rows, k0 + jk], mask=(rows < M))
                w_tile = nl.load(w[e, k0 + ik, cols], mask=(cols < N))
                acc += nl.matmul(a_tile, w_tile)
            nl.store(out[rows, cols], value=nl.copy(acc, dtype=a.dtype), mask=(rows < M) & (cols < N))
    return out


@nki.jit
def top2_gate(p):
    """Top-2 routing weights of probabilities p [T, E] (rows sum to 1, values in [0, 1]):
    g[t, e] = p[t, e] / (p1 + p2) for the two largest p1 >= p2 of row t, 0 elsewhere: what
    torch.topk(p, 2) and top_weights / top_weights.sum(-1) give, scattered back to a dense
    [T, E] (ties in the second place would select more than two experts; they do not occur in
    continuous data)."""
    T, E = p.shape
    out = nl.ndarray((T, E), dtype=p.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    je = nl.arange(E)[None, :]
    for r in nl.affine_range(math.ceil(T / TILE_P)):
        i = r * TILE_P + ip
        t = nl.load(p[i, je], mask=(i < T))
        m1 = nl.max(t, axis=1, keepdims=True)                                   # [128, 1]
        is1 = nl.greater_equal(t, m1, dtype=nl.float32)                         # 1 at the max
        m2 = nl.max(nl.subtract(t, nl.multiply(is1, 2.0)), axis=1, keepdims=True)
        sel = nl.greater_equal(t, m2, dtype=nl.float32)                         # the top two
        g = nl.divide(nl.multiply(t, sel), nl.add(m1, m2))
        nl.store(out[i, je], value=g, mask=(i < T))
    return out


@nki.jit
def add_scaled_rows(acc, y, g, col):
    """acc + g[:, col:col+1] * y for acc, y [T, D] and g [T, E] (a routing weight per row): one
    expert's weighted contribution added to the running output; acc None means zeros."""
    T, D = y.shape
    out = nl.ndarray((T, D), dtype=y.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(TILE_P)[:, None]
    j0 = nl.arange(1)[None, :]
    jf = nl.arange(TILE_F)[None, :]
    for r in nl.affine_range(math.ceil(T / TILE_P)):
        i = r * TILE_P + ip
        w = nl.load(g[i, col + j0], mask=(i < T))                               # [128, 1]
        for c in nl.affine_range(math.ceil(D / TILE_F)):
            j = c * TILE_F + jf
            valid = (i < T) & (j < D)
            t = nl.multiply(nl.load(y[i, j], mask=valid), w)
            if acc is not None:
                t = nl.add(nl.load(acc[i, j], mask=valid), t)
            nl.store(out[i, j], value=t, mask=valid)
    return out
