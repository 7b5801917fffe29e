# Fused kernel for L2_079 dw_sep_conv_small: depthwise 3x3 on the PE with the even and odd padded rows of two images stacked on the partitions (6 diagonal-block matmuls give an even and an odd output row per position), bias+BN1+ReLU on its PSUM evacuation into SBUF, then the 1x1 pointwise conv on the PE straight from SBUF with bias+BN2+ReLU on its evacuation; one HBM read of x, one write of the output.
#
# task: L2_079
#
# Layout: lanes 0..2C-1 hold the even padded rows E[i] = prow[2i] of two images (image g's
# channels at g*C..), lanes 2C..4C-1 their odd rows O[i] = prow[2i+1], flat with row pitch
# WP = W + 2. Output row 2i needs (E[i], O[i], E[i+1]) and row 2i+1 needs (O[i], E[i+1], O[i+1]),
# so for each column tap kw the moving slices at row offset a = 0 and a = 1 feed both: the
# stationary is block diagonal-by-channel, diag(w[:, kh, kw]) in block (half, out-half) by
#   a = 0: even += w0 E + w1 O, odd += w0 O;      a = 1: even += w2 E, odd += w1 E + w2 O.
# The pad columns are dropped when ACT evacuates PSUM, so the pointwise conv streams only real
# pixels: its block stationaries [4C, 2*CO] take the even rows (lanes of half 0) or the odd rows
# (half 1) of both images, and the results are stored to the even / odd output rows.
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

PSUM_F = 512
EPS = 1e-5


@nki.jit
def kernel(x, depthwise_weight, depthwise_bias, pointwise_weight, pointwise_bias,
           bn1_weight, bn1_bias, bn1_running_mean, bn1_running_var,
           bn2_weight, bn2_bias, bn2_running_mean, bn2_running_var):
    N, C, H, W = x.shape
    CO = pointwise_weight.shape[0]
    KH = depthwise_weight.shape[2]
    KW = depthwise_weight.shape[3]
    T = KH * KW
    out = nl.ndarray((N, CO, H, W), dtype=x.dtype, buffer=nl.shared_hbm)

    G = max(1, 128 // C)               # images per group on the partitions
    GP = G * C
    J = max(1, 128 // CO)              # images per pointwise matmul (output partitions)
    n_pairs = (G + J - 1) // J
    GQ = J * CO
    WP = W + 2
    G2 = max(1, G // 2)                # images per group: their even and odd rows fill the lanes
    NE = (H + 1) // 2                  # even output rows
    NO = H // 2                        # odd output rows
    NRB = NE + 2                       # rows of E / O kept (one spare for the last taps' overrun)
    R = max(1, min(NE, PSUM_F // WP))  # i-rows per PSUM tile
    n_chunks = (NE + R - 1) // R
    HW = H * W
    n_groups = (N + G2 - 1) // G2

    x_rows = x.reshape((N * C, H, W))
    out_rows = out.reshape((N * CO, H, W))

    # ---- depthwise tap weights, one row per (slot, channel) lane ----
    w_rep = nl.ndarray((GP, T), dtype=nl.float32, buffer=nl.sbuf)
    w_taps = depthwise_weight.reshape((C, T))
    for g in nl.static_range(G):
        w_rep[g * C:(g + 1) * C, :] = nl.load(w_taps[:, :])
    ident = nl.load(nl.shared_identity_matrix(128, dtype=nl.float32))
    # row-pair stationaries S[a, kw]: block (half, blk) = diag(w[:, kh*KW + kw]) over the 2*C
    # (image, channel) lanes of a half, kh from KHS (-1: a zero block); half 0 = even padded rows,
    # blk 0 = even output rows
    KHS = [[[0, 1], [-1, 0]], [[2, -1], [1, 2]]]     # [a][blk][half]
    HL = GP // 2
    dw_S = nl.zeros((GP, 2 * KW, GP), dtype=nl.float32, buffer=nl.sbuf)
    cnt = 0
    for a_ in nl.static_range(2):
        for kw in nl.static_range(KW):
            for blk in nl.static_range(2):
                for half in nl.static_range(2):
                    kh = KHS[a_][blk][half]
                    if kh >= 0:
                        t = kh * KW + kw
                        src_id = ident[half * HL:(half + 1) * HL, half * HL:(half + 1) * HL]
                        dst = dw_S[half * HL:(half + 1) * HL, a_ * KW + kw, blk * HL:(blk + 1) * HL]
                        if cnt % 2 == 0:
                            dst[...] = nisa.tensor_scalar(data=src_id, op0=np.multiply,
                                                          operand0=w_rep[half * HL:(half + 1) * HL, t:t + 1])
                        else:
                            dst[...] = nisa.activation(op=nl.copy, data=src_id,
                                                       scale=w_rep[half * HL:(half + 1) * HL, t:t + 1])
                        cnt += 1

    # ---- the input bands (loaded in the order they are needed among the small loads) ----
    flats = []

    def load_band(gi):
        # lanes [0, HL): even padded rows E[i] = prow[2i] of G2 images; [HL, 2HL): odd rows O[i]
        n0 = gi * G2
        P = min(G2, N - n0) * C
        band = nl.zeros((GP, NRB, WP), dtype=nl.float32, buffer=nl.sbuf)
        ne = H // 2
        if ne > 0:
            band[0:P, 1:1 + ne, 1:1 + W] = nl.load(x_rows[n0 * C:n0 * C + P, 1:2 * ne:2, :])
        no = (H + 1) // 2
        band[HL:HL + P, 0:no, 1:1 + W] = nl.load(x_rows[n0 * C:n0 * C + P, 0:2 * no - 1:2, :])
        flats.append(band.reshape((GP, NRB * WP)))

    # ---- BN folded with the conv biases, on the channel partitions, then copied to every image
    #      slot by on-chip DMAs: y1 = relu(s1 * dw + t1), y = relu(s2 * pw + t2) ----
    def fold(nc, cbias, gw, gb, gm, gv, n_rep):
        m = nl.ndarray((nc, 5), dtype=nl.float32, buffer=nl.sbuf)
        m[:, 0:1] = nl.load(cbias.reshape((nc, 1)))
        m[:, 1:2] = nl.load(gw.reshape((nc, 1)))
        m[:, 2:3] = nl.load(gb.reshape((nc, 1)))
        m[:, 3:4] = nl.load(gm.reshape((nc, 1)))
        m[:, 4:5] = nl.load(gv.reshape((nc, 1)))
        st = nl.ndarray((nc * n_rep, 2), dtype=nl.float32, buffer=nl.sbuf)
        sc = nl.multiply(m[:, 1:2], nl.rsqrt(nl.add(m[:, 4:5], EPS)))
        st[0:nc, 0:1] = nl.copy(sc)
        st[0:nc, 1:2] = nl.add(nl.multiply(nl.subtract(m[:, 0:1], m[:, 3:4]), sc), m[:, 2:3])
        for g in nl.static_range(1, n_rep):
            nisa.dma_copy(dst=st[g * nc:(g + 1) * nc, :], src=st[0:nc, :])
        return st

    load_band(0)
    st1 = fold(C, depthwise_bias, bn1_weight, bn1_bias, bn1_running_mean, bn1_running_var, G)
    # ---- pointwise stationaries: pw_bd[(J*j + i)*C + ci, j, i*CO + co] = pw[co, ci], made by one
    #      PE transpose per j of the block-placed natural weights ----
    pw_rows = pointwise_weight.reshape((CO, C))
    pw_nat = nl.zeros((GQ, n_pairs, GP), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.static_range(n_pairs):
        for i in nl.static_range(J):
            s = j * J + i
            if s < G:
                pw_nat[i * CO:(i + 1) * CO, j, s * C:(s + 1) * C] = nl.load(pw_rows[:, :])
    for gi in nl.static_range(1, n_groups):
        load_band(gi)
    pw_bd = nl.ndarray((GP, n_pairs, GQ), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.static_range(n_pairs):
        pw_bd[:, j, :] = nl.copy(nl.transpose(pw_nat[:, j, :]))
    s1 = st1[:, 0:1]
    t1 = st1[:, 1:2]
    def build_pointwise():
        st2 = fold(CO, pointwise_bias, bn2_weight, bn2_bias, bn2_running_mean, bn2_running_var, J)
        s2 = st2[:, 0:1]
        t2 = st2[:, 1:2]

        return s2, t2

    def depthwise(gi):
        flat = flats[gi]
        h = nl.ndarray((GP, NE, W), dtype=nl.float32, buffer=nl.sbuf)
        for ch in nl.static_range(n_chunks):
            i0 = ch * R
            nr = min(R, NE - i0)
            L = nr * WP
            acc = nl.zeros((GP, R * WP), dtype=nl.float32, buffer=nl.psum)
            for a_ in nl.static_range(2):
                for kw in nl.static_range(KW):
                    off = (i0 + a_) * WP + kw
                    acc[:, 0:L] += nisa.nc_matmul(dw_S[:, a_ * KW + kw, :], flat[:, off:off + L])
            acc3 = acc.reshape((GP, R, WP))
            h[:, i0:i0 + nr, :] = nisa.activation(op=nl.relu, data=acc3[:, 0:nr, 0:W],
                                                  bias=t1, scale=s1)
        return h.reshape((GP, NE * W))

    def pointwise(gi, hf, s2, t2, pw_bd):
        # pair j = 0: the even rows of the group's images, j = 1: the odd rows
        n0 = gi * G2
        ng = min(G2, N - n0)
        Q = ng * CO
        for j in nl.static_range(2):
            nrows = NE if j == 0 else NO
            if nrows > 0:
                npx = nrows * W
                res = nl.ndarray((GQ, NE * W), dtype=nl.float32, buffer=nl.sbuf)
                for q0 in nl.static_range(0, npx, PSUM_F):
                    qs = min(PSUM_F, npx - q0)
                    ps = nl.zeros((GQ, PSUM_F), dtype=nl.float32, buffer=nl.psum)
                    ps[0:Q, 0:qs] += nisa.nc_matmul(pw_bd[:, j, 0:Q], hf[:, q0:q0 + qs])
                    res[0:Q, q0:q0 + qs] = nisa.activation(op=nl.relu, data=ps[0:Q, 0:qs],
                                                           bias=t2[0:Q, :], scale=s2[0:Q, :])
                r3 = res.reshape((GQ, NE, W))
                nl.store(out_rows[n0 * CO:n0 * CO + Q, j:j + 2 * nrows - 1:2, :],
                         value=r3[0:Q, 0:nrows, :])

    # software pipeline on the PE: depthwise of group g+1 before the pointwise of group g
    hs = []
    state = []
    for gi in nl.static_range(n_groups):
        hs.append(depthwise(gi))
        if gi == 0:
            state.append(build_pointwise())
        else:
            s2, t2 = state[0]
            pointwise(gi - 1, hs[gi - 1], s2, t2, pw_bd)
    s2, t2 = state[0]
    pointwise(n_groups - 1, hs[n_groups - 1], s2, t2, pw_bd)
    return out
