# Fused kernel for L2_059 mlp_2layer_gelu_small: fc1 computed transposed (h^T = W1 x^T) so bias + exact GELU are one ACT instruction on the PSUM evacuation and h^T stays in SBUF as fc2's stationary operand; fc2's bias is added on its evacuation; no HBM intermediate.
#
# task: L2_059
#
# x [M, K] is transposed once on the PE (matmuls against an identity, four blocks per PSUM bank,
# one copy out). For each 128-feature tile of fc1, W1's rows are transposed to W1^T [K, 128] and
# the [128 f, <=512 m] products accumulate over K; ACT writes gelu(acc + b1[f]) into h^T [f, M].
# fc2 then takes h^T's [f, 128 m] slices as the stationary operand against W2^T [f, <=512 o]
# blocks (transposed the same way), and the Vector engine adds b2 while evacuating PSUM.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TP = 128
TN = 512


@nki.jit
def kernel(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
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
    OC = (O + TN - 1) // TN

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

    # ---- x^T [K (KT x 128), M] ----
    xT = nl.ndarray((TP, KT, MT * TP), dtype=nl.float32, buffer=nl.sbuf)
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        xt = nl.ndarray((TP, K), dtype=nl.float32, buffer=nl.sbuf)
        xt[0:ms, :] = nl.load(x2[m0:m0 + ms, :])
        transpose_rows(xt, ms, KT, xT, m0)

    # ---- biases: b1 per feature on the partitions, b2 along the free axis ----
    b1 = nl.ndarray((TP, FT), dtype=nl.float32, buffer=nl.sbuf)
    b1_v = fc1_bias.reshape((FT, TP))
    for ft in nl.static_range(FT):
        b1[:, ft:ft + 1] = nl.load(b1_v[ft:ft + 1, :].reshape((TP, 1)))
    b2 = nl.load(fc2_bias.reshape((1, O)))

    # ---- fc1 + bias + GELU, transposed: hT [F (FT x 128), M] ----
    # software pipeline on the PE: W1 tile ft+1 is transposed before the products of tile ft, so
    # the PE never waits for a transpose's PSUM evacuation
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
                acc[:, 0:cs] += nisa.nc_matmul(w1T[:, kt, :], xT[:, kt, c0:c0 + cs])
            hT[:, ft, c0:c0 + cs] = nisa.activation(op=nl.gelu, data=acc[:, 0:cs],
                                                    bias=b1[:, ft:ft + 1], scale=1.0)

    w1Ts = [prep1(0)]
    for ft in nl.static_range(FT):
        if ft + 1 < FT:
            w1Ts.append(prep1(ft + 1))
        mm1(ft, w1Ts[ft])

    # ---- fc2 + bias: out [M, O] in [128 m, <=OW o] tiles, pipelined the same way ----
    OW = 256
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
        b2_bc = b2[0:1, o0:o0 + os_].broadcast_to((TP, os_))
        for mt in nl.static_range(MT):
            m0 = mt * TP
            ms = min(TP, M - m0)
            acc = nl.ndarray((TP, OW), dtype=nl.float32, buffer=nl.psum)
            for ft in nl.static_range(FT):
                acc[0:ms, 0:os_] += nisa.nc_matmul(hT[:, ft, m0:m0 + ms], w2T[:, ft, 0:os_])
            res = nl.add(acc[0:ms, 0:os_], b2_bc[0:ms, :])
            nl.store(o2[m0:m0 + ms, o0:o0 + os_], value=res)

    w2Ts = [prep2(0)]
    for oc in nl.static_range(OC2):
        if oc + 1 < OC2:
            w2Ts.append(prep2(oc + 1))
        mm2(oc, w2Ts[oc])
    return out
