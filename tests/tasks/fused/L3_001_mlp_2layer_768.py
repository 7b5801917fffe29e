# Fused kernel for L3_001 mlp_2layer_768: x + fc2(gelu(fc1(LayerNorm(x)))) in one pass on chip: LayerNorm's statistics on the Vector engine, the normalised rows transposed on the PE with the affine weight and bias applied per partition on the PSUM evacuation; fc1 computed transposed so bias + exact GELU are one ACT instruction and the hidden layer stays in SBUF; fc2's evacuation adds (x + b2), kept in SBUF since the load. x is read once, the output written once, no HBM intermediate.
#
# task: L3_001
#
# Per 128-row tile of x [M, K]: bn_stats / bn_aggr give mean and variance, one tensor_scalar
# gives (x - mean) * rstd, the PE transposes it into n^T [K, M] and the evacuation applies
# ln_weight[k] * . + ln_bias[k] (per-partition scalars in that layout). The same tile plus b2 is
# kept as the residual term. fc1: for each 128-feature tile, W1's rows are transposed to
# W1^T [K, 128] (pipelined one tile ahead) and the [128 f, <=512 m] products accumulate over K;
# ACT writes gelu(acc + b1[f]) into h^T [f, M]. fc2: h^T's [f, 128 m] slices are the stationary
# operand against W2^T [f, <=128 o] blocks, and the Vector engine adds the residual term on the
# PSUM evacuation.
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TP = 128
TN = 512
EPS = 1e-5


@nki.jit
def kernel(x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    K = x.shape[-1]
    F = fc1_weight.shape[0]
    O = fc2_weight.shape[0]
    lead = tuple(x.shape[:-1])
    M = 1
    for d in lead:
        M = M * d
    out = nl.ndarray(lead + (O,), dtype=x.dtype, buffer=nl.shared_hbm)
    x2 = x.reshape((M, K))
    o2 = out.reshape((M, O))

    KT = K // TP
    FT = F // TP
    MT = (M + TP - 1) // TP
    MC = (M + TN - 1) // TN

    FS = 512
    while K % FS != 0:
        FS = FS // 2
    NS = K // FS

    ident = nl.load(nl.shared_identity_matrix(TP, dtype=nl.float32))
    flip = [0]

    def evac(dst, src):
        # alternate PSUM evacuations between the Vector and Scalar engines
        if flip[0] % 2 == 0:
            dst[...] = nl.copy(src)
        else:
            dst[...] = nisa.activation(op=nl.copy, data=src)
        flip[0] += 1

    def transpose_rows(src_sb, rows, nblk, dstT, col0):
        """dstT[:, b, col0:col0 + rows] = src_sb[0:rows, b*128:(b+1)*128]^T for b < nblk, four
        blocks per PSUM bank."""
        for b0 in nl.static_range(0, nblk, 4):
            nb = min(4, nblk - b0)
            ps = nl.ndarray((TP, 4, TP), dtype=nl.float32, buffer=nl.psum)
            for b in nl.static_range(nb):
                ps[:, b, 0:rows] += nisa.nc_matmul(src_sb[0:rows, (b0 + b) * TP:(b0 + b + 1) * TP],
                                                   ident[0:rows, 0:rows])
            evac(dstT[:, b0:b0 + nb, col0:col0 + rows], ps[:, 0:nb, 0:rows])

    # ---- LayerNorm's affine per feature on the partitions (the n^T layout); b1 likewise ----
    g_col = nl.ndarray((TP, KT), dtype=nl.float32, buffer=nl.sbuf)
    be_col = nl.ndarray((TP, KT), dtype=nl.float32, buffer=nl.sbuf)
    g_v = ln_weight.reshape((KT, TP))
    be_v = ln_bias.reshape((KT, TP))
    for kt in nl.static_range(KT):
        g_col[:, kt:kt + 1] = nl.load(g_v[kt:kt + 1, :].reshape((TP, 1)))
        be_col[:, kt:kt + 1] = nl.load(be_v[kt:kt + 1, :].reshape((TP, 1)))
    b1 = nl.ndarray((TP, FT), dtype=nl.float32, buffer=nl.sbuf)
    b1_v = fc1_bias.reshape((FT, TP))
    for ft in nl.static_range(FT):
        b1[:, ft:ft + 1] = nl.load(b1_v[ft:ft + 1, :].reshape((TP, 1)))
    b2_bc = nl.load(fc2_bias.reshape((1, O))).broadcast_to((TP, O))

    # ---- LayerNorm, transposed: nT [K (KT x 128), M]; residual term xr = x + b2 [m, mt, O] ----
    nT = nl.ndarray((TP, KT, MT * TP), dtype=nl.float32, buffer=nl.sbuf)
    xr = nl.ndarray((TP, MT, O), dtype=nl.float32, buffer=nl.sbuf)
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        xt = nl.ndarray((TP, K), dtype=nl.float32, buffer=nl.sbuf)
        xt[0:ms, :] = nl.load(x2[m0:m0 + ms, :])
        st = nl.ndarray((TP, NS * 6), dtype=nl.float32, buffer=nl.sbuf)
        for s in nl.static_range(NS):
            st[0:ms, s * 6:(s + 1) * 6] = nisa.bn_stats(xt[0:ms, s * FS:(s + 1) * FS])
        mv = nisa.bn_aggr(st[0:ms, :])                                   # [ms, 2]: mean, var
        rstd = nisa.tensor_scalar(data=mv[:, 1:2], op0=np.add, operand0=EPS)
        rstd = nl.rsqrt(rstd)
        nrm = nl.ndarray((TP, K), dtype=nl.float32, buffer=nl.sbuf)
        nrm[0:ms, :] = nisa.tensor_scalar(data=xt[0:ms, :], op0=np.subtract, operand0=mv[:, 0:1],
                                          op1=np.multiply, operand1=rstd)
        xr[0:ms, mt, :] = nisa.tensor_tensor(data1=xt[0:ms, :], data2=b2_bc[0:ms, :], op=np.add,
                                             engine=nisa.gpsimd_engine)
        for b0 in nl.static_range(0, KT, 4):
            nb = min(4, KT - b0)
            ps = nl.ndarray((TP, 4, TP), dtype=nl.float32, buffer=nl.psum)
            for b in nl.static_range(nb):
                ps[:, b, 0:ms] += nisa.nc_matmul(nrm[0:ms, (b0 + b) * TP:(b0 + b + 1) * TP],
                                                 ident[0:ms, 0:ms])
            for b in nl.static_range(nb):
                kt = b0 + b
                if kt % 2 == 0:
                    nT[:, kt, m0:m0 + ms] = nisa.tensor_scalar(
                        data=ps[:, b, 0:ms], op0=np.multiply, operand0=g_col[:, kt:kt + 1],
                        op1=np.add, operand1=be_col[:, kt:kt + 1])
                else:
                    nT[:, kt, m0:m0 + ms] = nisa.activation(
                        op=nl.copy, data=ps[:, b, 0:ms], scale=g_col[:, kt:kt + 1],
                        bias=be_col[:, kt:kt + 1])

    # ---- fc1 + bias + GELU, transposed: hT [F (FT x 128), M] ----
    hT = nl.ndarray((TP, FT, MT * TP), dtype=nl.float32, buffer=nl.sbuf)

    def prep1(ft):
        w1 = nl.load(fc1_weight[ft * TP:(ft + 1) * TP, :])                  # [128 f, K]
        w1T = nl.ndarray((TP, KT, TP), dtype=nl.float32, buffer=nl.sbuf)   # [k, kt, f]
        transpose_rows(w1, TP, KT, w1T, 0)
        return w1T

    def mm1(ft, w1T):
        for mc in nl.static_range(MC):
            c0 = mc * TN
            cs = min(TN, M - c0)
            acc = nl.ndarray((TP, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in nl.static_range(KT):
                acc[:, 0:cs] += nisa.nc_matmul(w1T[:, kt, :], nT[:, kt, c0:c0 + cs])
            hT[:, ft, c0:c0 + cs] = nisa.activation(op=nl.gelu, data=acc[:, 0:cs],
                                                    bias=b1[:, ft:ft + 1], scale=1.0)

    w1Ts = [prep1(0)]
    for ft in nl.static_range(FT):
        if ft + 1 < FT:
            w1Ts.append(prep1(ft + 1))
        mm1(ft, w1Ts[ft])

    # ---- fc2 + (x + b2): out [M, O] in [128 m, <=OW o] tiles, pipelined the same way ----
    OW = 128
    OC2 = (O + OW - 1) // OW

    def prep2(oc):
        o0 = oc * OW
        os_ = min(OW, O - o0)
        ob = (os_ + TP - 1) // TP
        w2T = nl.ndarray((TP, FT, OW), dtype=nl.float32, buffer=nl.sbuf)   # [f, ft, o]
        for s in nl.static_range(ob):
            w2 = nl.load(fc2_weight[o0 + s * TP:o0 + (s + 1) * TP, :])       # [128 o, F]
            transpose_rows(w2, TP, FT, w2T, s * TP)
        return w2T

    def mm2(oc, w2T):
        o0 = oc * OW
        os_ = min(OW, O - o0)
        for mt in nl.static_range(MT):
            m0 = mt * TP
            ms = min(TP, M - m0)
            acc = nl.ndarray((TP, OW), dtype=nl.float32, buffer=nl.psum)
            for ft in nl.static_range(FT):
                acc[0:ms, 0:os_] += nisa.nc_matmul(hT[:, ft, m0:m0 + ms], w2T[:, ft, 0:os_])
            res = nl.add(acc[0:ms, 0:os_], xr[0:ms, mt, o0:o0 + os_])
            nl.store(o2[m0:m0 + ms, o0:o0 + os_], value=res)

    w2Ts = [prep2(0)]
    for oc in nl.static_range(OC2):
        if oc + 1 < OC2:
            w2Ts.append(prep2(oc + 1))
        mm2(oc, w2Ts[oc])
    return out
