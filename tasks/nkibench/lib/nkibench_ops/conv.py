"""2-D convolution of NCHW tensors (nn.Conv2d semantics), one kernel.

Two paths:
- dense / grouped (groups < C_in): per group, the group's input channels are the contraction
  (partition) axis of the Tensor engine, in tiles of at most 128 (the last one may be short). The
  weights are transposed once to [C_in/g, KH*KW, C_out/g]. The output is built in blocks of rows:
  the block's padded input rows are loaded into a zeroed SBUF band (the zeros are the padding), and
  every output row (in chunks of at most 512 columns) accumulates in one PSUM tile the matmuls of
  each tap's weights with the matching (shifted, strided, dilated) input row, over all input-channel
  tiles. The bias is added on the way out of PSUM.
- depthwise (groups == C_in == C_out): no contraction, so channels go on the partitions and the
  Vector engine does a multiply-add per tap with the channel's tap weight as a per-partition scalar,
  over a zero-padded band of input rows.
"""
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_P = 128
TILE_OW = 512          # output columns per PSUM tile (one 2 KiB fp32 bank)
BLOCK_ELEMS = 2048     # output pixels (rows x columns) per block of rows


def _pair(v):
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _tiles(total, size):
    """[(start, length)] covering range(total) in pieces of at most `size`."""
    return [(s, min(size, total - s)) for s in range(0, total, size)]


@nki.jit
def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """nn.Conv2d forward: x [N, C_in, H, W], weight [C_out, C_in/groups, KH, KW], bias [C_out] or
    None; stride, padding, dilation an int or an (h, w) pair; zero padding.
    Returns [N, C_out, OH, OW] in HBM."""
    N, C_in, H, W = x.shape
    C_out, Cig, KH, KW = weight.shape
    SH, SW = _pair(stride)
    PH, PW = _pair(padding)
    DH, DW = _pair(dilation)
    assert C_in % groups == 0 and C_out % groups == 0 and Cig == C_in // groups, \
        "conv2d: channels do not match groups"
    OH = (H + 2 * PH - DH * (KH - 1) - 1) // SH + 1
    OW = (W + 2 * PW - DW * (KW - 1) - 1) // SW + 1
    out = nl.ndarray((N, C_out, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)

    R = max(1, min(OH, BLOCK_ELEMS // OW))     # output rows per block
    BH = (R - 1) * SH + DH * (KH - 1) + 1      # padded input rows that feed them
    WP = W + 2 * PW
    T = KH * KW
    row_blocks = _tiles(OH, R)
    w_rows = weight.reshape((C_out, Cig, T))

    if groups == C_in and C_out == C_in and groups > 1:
        # ---- depthwise: the Vector engine, a per-partition scalar per tap ----
        w_taps = weight.reshape((C_out, T))
        for (c0, cs) in _tiles(C_in, TILE_P):
            w = nl.load(w_taps[c0:c0 + cs, :])                                   # [cs, T]
            if bias is not None:
                b = nl.load(bias.reshape((C_out, 1))[c0:c0 + cs, 0:1])          # [cs, 1]
            for n in nl.affine_range(N):
                for (r0, nr) in row_blocks:
                    top = r0 * SH - PH
                    lo = max(0, top)
                    hi = min(H, top + BH)
                    band = nl.zeros((cs, BH, WP), dtype=x.dtype, buffer=nl.sbuf)
                    if hi > lo:
                        band[:, lo - top:hi - top, PW:PW + W] = nl.load(x[n, c0:c0 + cs, lo:hi, :])
                    acc = None
                    for kh in nl.static_range(KH):
                        for kw in nl.static_range(KW):
                            t = kh * KW + kw
                            a0 = kh * DH
                            b0 = kw * DW
                            tap = band[:, a0:a0 + (nr - 1) * SH + 1:SH, b0:b0 + (OW - 1) * SW + 1:SW]
                            if acc is None:
                                acc = nisa.tensor_scalar(data=tap, op0=np.multiply, operand0=w[:, t:t + 1],
                                                         dtype=nl.float32)
                            else:
                                acc = nisa.scalar_tensor_tensor(data=tap, op0=np.multiply,
                                                                operand0=w[:, t:t + 1], op1=np.add,
                                                                operand1=acc)
                    if bias is not None:
                        acc = nisa.tensor_scalar(data=acc, op0=np.add, operand0=b, dtype=nl.float32)
                    nl.store(out[n, c0:c0 + cs, r0:r0 + nr, :], value=acc)
        return out

    # ---- dense / grouped: the Tensor engine, input channels contracted ----
    Cog = C_out // groups
    ci_tiles = _tiles(Cig, TILE_P)
    co_tiles = _tiles(Cog, TILE_P)
    ow_tiles = _tiles(OW, TILE_OW)
    CI = ci_tiles[0][1]
    CO = co_tiles[0][1]
    n_ci = len(ci_tiles)
    n_co = len(co_tiles)
    for g in nl.static_range(groups):
        gi = g * Cig            # the group's first input channel
        go = g * Cog            # and first output channel
        # w_sb[ci, ct, tap, co] = weight[go + co, ci_tile(ct) + ci, tap]
        w_sb = nl.ndarray((CI, n_ci, T, Cog), dtype=weight.dtype, buffer=nl.sbuf)
        b_sb = nl.ndarray((CO, n_co), dtype=x.dtype, buffer=nl.sbuf)
        for cot in nl.static_range(n_co):
            o0, os_ = co_tiles[cot]
            w_nat = nl.load(w_rows[go + o0:go + o0 + os_, :, :])                  # [os, Cig, T]
            for ct in nl.static_range(n_ci):
                i0, is_ = ci_tiles[ct]
                for t in nl.affine_range(T):
                    flipped = nl.transpose(w_nat[:, i0:i0 + is_, t])               # [is, os]
                    w_sb[0:is_, ct, t, o0:o0 + os_] = nl.copy(flipped)
            if bias is not None:
                b_sb[0:os_, cot:cot + 1] = nl.load(bias.reshape((C_out, 1))[go + o0:go + o0 + os_, 0:1])

        for n in nl.affine_range(N):
            for (r0, nr) in row_blocks:
                top = r0 * SH - PH
                lo = max(0, top)
                hi = min(H, top + BH)
                band = nl.zeros((CI, n_ci, BH, WP), dtype=x.dtype, buffer=nl.sbuf)
                if hi > lo:
                    for ct in nl.static_range(n_ci):
                        i0, is_ = ci_tiles[ct]
                        band[0:is_, ct, lo - top:hi - top, PW:PW + W] = \
                            nl.load(x[n, gi + i0:gi + i0 + is_, lo:hi, :])
                for cot in nl.static_range(n_co):
                    o0, os_ = co_tiles[cot]
                    res = nl.ndarray((CO, R, OW), dtype=x.dtype, buffer=nl.sbuf)
                    for r in nl.affine_range(nr):
                        for (q0, qs) in ow_tiles:
                            acc = nl.zeros((os_, qs), nl.float32, buffer=nl.psum)
                            for ct in nl.static_range(n_ci):
                                i0, is_ = ci_tiles[ct]
                                for kh in nl.affine_range(KH):
                                    for kw in nl.affine_range(KW):
                                        c0 = q0 * SW + kw * DW
                                        row = band[0:is_, ct, r * SH + kh * DH, c0:c0 + (qs - 1) * SW + 1:SW]
                                        acc += nl.matmul(w_sb[0:is_, ct, kh * KW + kw, o0:o0 + os_], row,
                                                         transpose_x=True)
                            if bias is not None:
                                res[0:os_, r, q0:q0 + qs] = nl.add(acc, b_sb[0:os_, cot:cot + 1])
                            else:
                                res[0:os_, r, q0:q0 + qs] = nl.copy(acc)
                    nl.store(out[n, go + o0:go + o0 + os_, r0:r0 + nr, :], value=res[0:os_, 0:nr, :])
    return out
