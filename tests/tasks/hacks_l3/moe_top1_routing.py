# Hack: a top-2-of-8 mixture of experts routed top-1. The gate (linear router) is computed
# exactly and each token goes to its most probable expert alone, with weight 1 (what top-k
# renormalisation gives for k = 1); the expert MLPs gelu(x @ w1[e]) @ w2[e] are exact. The
# second expert's share of every token is missing.
#
# task: L3_047
# expect: mismatch|relative_norm
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import _l3_ops as ops

TP = 128
TN = 512


@nki.jit
def kernel(x, experts_w1, experts_w2, gate_weight, gate_bias):
    B, S, D = x.shape
    E, _, F = experts_w1.shape
    out = nl.ndarray((B, S, D), dtype=x.dtype, buffer=nl.shared_hbm)
    x2, M = ops.rows_of(x)
    o2 = out.reshape((M, D))
    KT = D // TP
    FT = F // TP
    MT = (M + TP - 1) // TP
    ident = ops.identity()

    # x^T [D (KT x 128), M]
    xT = nl.ndarray((TP, KT, MT * TP), dtype=nl.float32, buffer=nl.sbuf)
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        xt = nl.ndarray((TP, D), dtype=nl.float32, buffer=nl.sbuf)
        xt[0:ms, :] = nl.load(x2[m0:m0 + ms, :])
        ops.transpose_rows(ident, xt, ms, KT, xT, m0)

    # the router: logits [m, E] = x @ gate_weight^T + gate_bias; top-1 as a one-hot mask
    gw = nl.load(gate_weight)                                          # [E, D]
    gwT = nl.ndarray((TP, KT, TP), dtype=nl.float32, buffer=nl.sbuf)
    ops.transpose_rows(ident, gw, E, KT, gwT, 0)
    gb = nl.load(gate_bias.reshape((1, E))).broadcast_to((TP, E))
    onehot = nl.ndarray((TP, MT, E), dtype=nl.float32, buffer=nl.sbuf)
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        lp = nl.ndarray((TP, E), dtype=nl.float32, buffer=nl.psum)
        for kt in nl.static_range(KT):
            lp[0:ms, :] += nisa.nc_matmul(xT[:, kt, m0:m0 + ms], gwT[:, kt, 0:E])
        lg = nl.add(lp[0:ms, :], gb[0:ms, :])
        mx = nl.max(lg, axis=1, keepdims=True)
        onehot[0:ms, mt, :] = nisa.tensor_scalar(data=lg, op0=np.greater_equal, operand0=mx)

    # every expert on every token (dense), each output weighted by the token's mask
    w1r = experts_w1.reshape((E * D, F))
    w2r = experts_w2.reshape((E * F, D))
    ip = nl.arange(TP)[:, None, None]
    ik = nl.arange(KT)[None, :, None]
    it = nl.arange(FT)[None, :, None]
    jf = nl.arange(TP)[None, None, :]
    jo = nl.arange(D)[None, None, :]
    acc_out = nl.ndarray((TP, MT, D), dtype=nl.float32, buffer=nl.sbuf)
    OB = 384
    for e in nl.static_range(E):
        hT = nl.ndarray((TP, FT, MT * TP), dtype=nl.float32, buffer=nl.sbuf)
        for ft in nl.static_range(FT):
            w1t = nl.load(w1r[e * D + ik * TP + ip, ft * TP + jf])           # [128 k, KT, 128 f]
            for c0 in nl.static_range(0, M, TN):
                cs = min(TN, M - c0)
                acc = nl.ndarray((TP, TN), dtype=nl.float32, buffer=nl.psum)
                for kt in nl.static_range(KT):
                    acc[:, 0:cs] += nisa.nc_matmul(w1t[:, kt, :], xT[:, kt, c0:c0 + cs])
                hT[:, ft, c0:c0 + cs] = nisa.activation(op=nl.gelu, data=acc[:, 0:cs])
        w2t = nl.load(w2r[e * F + it * TP + ip, jo])                        # [128 f, FT, D]
        for mt in nl.static_range(MT):
            m0 = mt * TP
            ms = min(TP, M - m0)
            for o0 in nl.static_range(0, D, OB):
                acc = nl.ndarray((TP, OB), dtype=nl.float32, buffer=nl.psum)
                for ft in nl.static_range(FT):
                    acc[0:ms, :] += nisa.nc_matmul(hT[:, ft, m0:m0 + ms], w2t[:, ft, o0:o0 + OB])
                dst = acc_out[0:ms, mt, o0:o0 + OB]
                if e == 0:
                    dst[...] = nisa.tensor_scalar(data=acc[0:ms, :], op0=np.multiply,
                                                  operand0=onehot[0:ms, mt, e:e + 1])
                else:
                    dst[...] = nisa.scalar_tensor_tensor(data=acc[0:ms, :], op0=np.multiply,
                                                         operand0=onehot[0:ms, mt, e:e + 1],
                                                         op1=np.add, operand1=dst)
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        nl.store(o2[m0:m0 + ms, :], value=acc_out[0:ms, mt, :])
    return out
