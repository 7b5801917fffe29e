# Fused kernel for L2_079 dw_sep_conv_small: depthwise 3x3 as 9 diagonal-weight matmuls over a flat zero-padded band (4 images on the partitions), bias+BN1+ReLU on its PSUM evacuation into SBUF, then the 1x1 pointwise conv on the PE straight from SBUF with bias+BN2+ReLU on its evacuation; one HBM read of x, one write of the output.
#
# task: L2_079
#
# Layout: G = 128 // C images share the partitions (image g's channels at g*C..). The padded images
# are flat in SBUF with row pitch WP = W + 2, so tap (kh, kw) of output pixel q = oh*WP + ow reads
# band[q + kh*WP + kw]: each tap is one matmul whose stationary is diag(w[:, tap]) repeated per
# image slot, whose moving operand is a contiguous slice. The pad columns are dropped when ACT
# evacuates PSUM, so the pointwise conv streams only real pixels. The pointwise weights are
# block-structured stationaries [G*C, 2*CO] (one per pair of images), transposed once on the PE.
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
    PH = KH // 2
    PW = KW // 2
    out = nl.ndarray((N, CO, H, W), dtype=x.dtype, buffer=nl.shared_hbm)

    G = max(1, 128 // C)               # images per group on the partitions
    GP = G * C
    J = max(1, 128 // CO)              # images per pointwise matmul (output partitions)
    n_pairs = (G + J - 1) // J
    GQ = J * CO
    WP = W + 2 * PW
    HP = H + 2 * PH + 1
    R = max(1, min(H, PSUM_F // WP))
    n_chunks = (H + R - 1) // R
    HW = H * W
    n_pix = (HW + PSUM_F - 1) // PSUM_F
    n_groups = (N + G - 1) // G

    x_rows = x.reshape((N * C, H, W))
    out_rows = out.reshape((N * CO, HW))

    # ---- depthwise stationaries: diag(w[:, t]) per image slot (DVE and ACT take turns) ----
    w_rep = nl.ndarray((GP, T), dtype=nl.float32, buffer=nl.sbuf)
    w_taps = depthwise_weight.reshape((C, T))
    for g in nl.static_range(G):
        w_rep[g * C:(g + 1) * C, :] = nl.load(w_taps[:, :])
    ident = nl.load(nl.shared_identity_matrix(128, dtype=nl.float32))
    dw_diag = nl.ndarray((GP, T, GP), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.static_range(T):
        if t % 2 == 0:
            dw_diag[:, t, :] = nisa.tensor_scalar(data=ident[0:GP, 0:GP], op0=np.multiply,
                                                  operand0=w_rep[:, t:t + 1])
        else:
            dw_diag[:, t, :] = nisa.activation(op=nl.copy, data=ident[0:GP, 0:GP],
                                               scale=w_rep[:, t:t + 1])

    # ---- the input bands (loaded in the order they are needed among the small loads) ----
    flats = []

    def load_band(gi):
        n0 = gi * G
        P = min(G, N - n0) * C
        band = nl.zeros((GP, HP, WP), dtype=nl.float32, buffer=nl.sbuf)
        band[0:P, PH:PH + H, PW:PW + W] = nl.load(x_rows[n0 * C:n0 * C + P, :, :])
        flats.append(band.reshape((GP, HP * WP)))

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
        ng = min(G, N - gi * G)
        P = ng * C
        flat = flats[gi]
        h = nl.ndarray((GP, H, W), dtype=nl.float32, buffer=nl.sbuf)
        for ch in nl.static_range(n_chunks):
            r0 = ch * R
            nr = min(R, H - r0)
            L = nr * WP
            acc = nl.zeros((GP, R * WP), dtype=nl.float32, buffer=nl.psum)
            for t in nl.static_range(T):
                kh = t // KW
                kw = t % KW
                off = (r0 + kh) * WP + kw
                acc[0:P, 0:L] += nisa.nc_matmul(dw_diag[0:P, t, 0:P], flat[0:P, off:off + L])
            acc3 = acc.reshape((GP, R, WP))
            h[0:P, r0:r0 + nr, :] = nisa.activation(op=nl.relu, data=acc3[0:P, 0:nr, 0:W],
                                                    bias=t1[0:P, :], scale=s1[0:P, :])
        return h.reshape((GP, HW))

    def pointwise(gi, hf, s2, t2, pw_bd):
        n0 = gi * G
        ng = min(G, N - n0)
        P = ng * C
        for j in nl.static_range(n_pairs):
            i0 = j * J
            if i0 < ng:
                nj = min(J, ng - i0)
                Q = nj * CO
                res = nl.ndarray((GQ, HW), dtype=nl.float32, buffer=nl.sbuf)
                for pc in nl.static_range(n_pix):
                    q0 = pc * PSUM_F
                    qs = min(PSUM_F, HW - q0)
                    ps = nl.zeros((GQ, PSUM_F), dtype=nl.float32, buffer=nl.psum)
                    ps[0:Q, 0:qs] += nisa.nc_matmul(pw_bd[0:P, j, 0:Q], hf[0:P, q0:q0 + qs])
                    res[0:Q, q0:q0 + qs] = nisa.activation(op=nl.relu, data=ps[0:Q, 0:qs],
                                                           bias=t2[0:Q, :], scale=s2[0:Q, :])
                nb = (n0 + i0) * CO
                nl.store(out_rows[nb:nb + Q, :], value=res[0:Q, :])

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
