# Fused kernel for L2_019 matmul_gelu_small: gelu(a @ b) with the exact GELU applied by ScalarE as it evacuates each PSUM tile; b streams in its natural [k, n] layout, only a is transposed (on the PE), and the product never goes to HBM.
#
# task: L2_019
#
# out[m, n] tiles of [128 m, <=512 n] accumulate sum_k aT[k, m] b[k, n] over 128-row contraction
# steps (a ragged K ends with one narrower step). a's row tiles are transposed on the PE by
# matmuls against an identity into aT [k, kt, m].
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TP = 128
TN = 512


@nki.jit
def kernel(a, b):
    M, K = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    KT = (K + TP - 1) // TP
    MT = (M + TP - 1) // TP
    NC = (N + TN - 1) // TN

    ident = nl.load(nl.shared_identity_matrix(TP, dtype=nl.float32))

    a_sb = []
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        t = nl.ndarray((TP, K), dtype=nl.float32, buffer=nl.sbuf)
        t[0:ms, :] = nl.load(a[m0:m0 + ms, :])
        a_sb.append(t)
    b_sb = nl.ndarray((TP, KT, N), dtype=nl.float32, buffer=nl.sbuf)
    for kt in nl.static_range(KT):
        k0 = kt * TP
        kw = min(TP, K - k0)
        b_sb[0:kw, kt, :] = nl.load(b[k0:k0 + kw, :])

    aTs = []
    for mt in nl.static_range(MT):      # all transposes first: the PE never waits on a copy
        m0 = mt * TP
        ms = min(TP, M - m0)
        # aT[k, kt, m] = a[m0 + m, kt*128 + k], four blocks per PSUM bank
        aT = nl.ndarray((TP, KT, TP), dtype=nl.float32, buffer=nl.sbuf)
        for b0 in nl.static_range(0, KT, 4):
            nb = min(4, KT - b0)
            ps = nl.ndarray((TP, 4, TP), dtype=nl.float32, buffer=nl.psum)
            for j in nl.static_range(nb):
                k0 = (b0 + j) * TP
                kw = min(TP, K - k0)
                ps[0:kw, j, 0:ms] += nisa.nc_matmul(a_sb[mt][0:ms, k0:k0 + kw], ident[0:ms, 0:ms])
            for j in nl.static_range(nb):
                k0 = (b0 + j) * TP
                kw = min(TP, K - k0)
                if kw < TP:
                    aT[0:kw, b0 + j, 0:ms] = nl.copy(ps[0:kw, j, 0:ms])
            full = nb if K >= (b0 + nb) * TP else nb - 1
            if full > 0:
                aT[:, b0:b0 + full, 0:ms] = nl.copy(ps[:, 0:full, 0:ms])
        aTs.append(aT)
    for mt in nl.static_range(MT):
        m0 = mt * TP
        ms = min(TP, M - m0)
        aT = aTs[mt]
        for nc in nl.static_range(NC):
            n0 = nc * TN
            ns = min(TN, N - n0)
            acc = nl.ndarray((TP, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in nl.static_range(KT):
                kw = min(TP, K - kt * TP)
                acc[0:ms, 0:ns] += nisa.nc_matmul(aT[0:kw, kt, 0:ms], b_sb[0:kw, kt, n0:n0 + ns])
            res = nisa.activation(op=nl.gelu, data=acc[0:ms, 0:ns])
            nl.store(out[m0:m0 + ms, n0:n0 + ns], value=res)
    return out
