# Fused kernel for L2_044 attn_full_small: softmax(q k^T * scale + mask) v for all heads in one pass on chip: the mask rides in the QK^T matmul as an extra contraction row (ones against mask/scale), the scale and the max subtraction go into the exp on ScalarE (which also sums the row), and 1/sum is applied on the PV evacuation; scores and probabilities never touch HBM.
#
# task: L2_044
#
# q and k are loaded as [(b h s) rows, d] tiles and transposed on the PE into qT / kT [d, (b h s)];
# a (d+1)-th row holds ones in qT and mask[b, sk] / scale in kT, so one matmul per head gives
# scores + mask / scale in PSUM. The scores of a group of heads share one PSUM bank
# [sq, head, sk]: one row-max reduce covers the group; exp(scale * s - scale * max) is one ACT
# instruction per head with its row sum accumulated. e is transposed per head on the PE (sk onto
# the partitions) and multiplied with v loaded as [sk, head, d]; the PV evacuation multiplies by
# 1 / rowsum (one Vector instruction per group of heads).
import math

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TP = 128
PF = 512


@nki.jit
def kernel(q, k, v, mask):
    B, H, S, D = q.shape
    scale = 1.0 / math.sqrt(D)
    out = nl.ndarray((B, H, S, D), dtype=q.dtype, buffer=nl.shared_hbm)
    R = B * H * S
    q2 = q.reshape((R, D))
    k2 = k.reshape((R, D))
    v2 = v.reshape((R, D))
    o2 = out.reshape((R, D))
    BH = B * H
    RT = (R + TP - 1) // TP

    ident = nl.load(nl.shared_identity_matrix(TP, dtype=nl.float32))

    # ---- loads: q, k as [(b h s), d] row tiles; v as [s, (b h), d]; the mask rows ----
    qk_sb = []
    for src in (q2, k2):
        t = nl.ndarray((TP, RT, D), dtype=nl.float32, buffer=nl.sbuf)
        for rt in nl.static_range(RT):
            r0 = rt * TP
            rs = min(TP, R - r0)
            t[0:rs, rt, :] = nl.load(src[r0:r0 + rs, :])
        qk_sb.append(t)
    ip = nl.arange(S)[:, None, None]
    ih = nl.arange(BH)[None, :, None]
    idd = nl.arange(D)[None, None, :]
    v_sb = nl.load(v2[ih * S + ip, idd])                                # [S, BH, D]
    m_sb = nl.ndarray((D + 1, B, S), dtype=nl.float32, buffer=nl.sbuf)
    m_sb[D:D + 1, :, :] = nl.load(mask.reshape((1, B, S)))

    # ---- qT, kT [d (+1), (b h s)] ----
    qT = nl.ndarray((D + 1, R), dtype=nl.float32, buffer=nl.sbuf)
    kT = nl.ndarray((D + 1, R), dtype=nl.float32, buffer=nl.sbuf)
    for which in nl.static_range(2):
        src = qk_sb[which]
        dst = qT if which == 0 else kT
        for c0 in nl.static_range(0, R, PF):
            cs = min(PF, R - c0)
            ps = nl.ndarray((D, PF), dtype=nl.float32, buffer=nl.psum)
            for r0 in nl.static_range(c0, c0 + cs, TP):
                rs = min(TP, R - r0)
                rt = r0 // TP
                ps[:, r0 - c0:r0 - c0 + rs] += nisa.nc_matmul(src[0:rs, rt, :], ident[0:rs, 0:rs])
            if which == 0:
                dst[0:D, c0:c0 + cs] = nl.copy(ps[:, 0:cs])
            else:
                dst[0:D, c0:c0 + cs] = nisa.activation(op=nl.copy, data=ps[:, 0:cs])
    qT[D:D + 1, :] = nl.full((1, R), 1.0 / scale, dtype=nl.float32, buffer=nl.sbuf)
    kT3 = kT.reshape((D + 1, B, H * S))
    for b in nl.static_range(B):
        kT3[D:D + 1, b, :].reshape((1, H, S))[...] = nl.copy(
            m_sb[D:D + 1, b:b + 1, :].broadcast_to((1, H, S)))

    HG = max(1, PF // S)                     # heads per PSUM bank of scores
    res = nl.ndarray((S, BH, D), dtype=nl.float32, buffer=nl.sbuf)
    for g0 in nl.static_range(0, BH, HG):
        ng = min(HG, BH - g0)
        # scores (+ mask / scale) of the group: [sq, head, sk]
        sc = nl.ndarray((S, HG, S), dtype=nl.float32, buffer=nl.psum)
        for j in nl.static_range(ng):
            c = (g0 + j) * S
            sc[:, j, :] += nisa.nc_matmul(qT[:, c:c + S], kT[:, c:c + S])
        mx = nisa.tensor_reduce(op=np.max, data=sc[:, 0:ng, :], axis=(2,))   # [S, ng]
        nmx = nisa.tensor_scalar(data=mx, op0=np.multiply, operand0=-scale)
        e = nl.ndarray((S, HG, S), dtype=nl.float32, buffer=nl.sbuf)
        rsum = nl.ndarray((S, HG), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.static_range(ng):
            e[:, j, :] = nisa.activation_reduce(op=nl.exp, data=sc[:, j, :], reduce_op=np.add,
                                                reduce_res=rsum[:, j:j + 1], bias=nmx[:, j:j + 1],
                                                scale=scale)
        rinv = nl.reciprocal(rsum[:, 0:ng])
        # e^T per head: [sk, head, sq]
        eT_ps = nl.ndarray((S, HG, S), dtype=nl.float32, buffer=nl.psum)
        for j in nl.static_range(ng):
            eT_ps[:, j, :] += nisa.nc_matmul(e[:, j, :], ident[0:S, 0:S])
        eT = nl.copy(eT_ps[:, 0:ng, :])
        # PV: [sq, head, d]
        pv = nl.ndarray((S, HG, D), dtype=nl.float32, buffer=nl.psum)
        for j in nl.static_range(ng):
            pv[:, j, :] += nisa.nc_matmul(eT[:, j, :], v_sb[:, g0 + j, :])
        # one Vector instruction for the whole group: 1/rowsum broadcast along d
        rinv_bc = rinv.reshape((S, ng, 1)).broadcast_to((S, ng, D))
        res[:, g0:g0 + ng, :] = nl.multiply(pv[:, 0:ng, :], rinv_bc)
    nl.store(o2[ih * S + ip, idd], value=res)
    return out
