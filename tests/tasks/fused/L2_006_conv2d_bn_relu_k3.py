# Fused kernel for L2_006 conv2d_bn_relu_k3: 3x3 conv as 9 shifted matmuls over a flat zero-padded SBUF band, two images per matmul (block-diagonal weights on all 128 PE rows), eval BatchNorm folded to a per-channel scale/shift and applied with ReLU on the PSUM evacuation.
#
# task: L2_006
#
# Layout: a group of G = 128 // C images sits on the partitions (image g's channels at g*C..).
# The padded images live flat in SBUF, row pitch WP = W + 2, so the tap (kh, kw) of an output
# pixel q = oh*WP + ow is band[q + kh*WP + kw]: every tap's moving operand is one contiguous
# slice of up to 512 columns (the two pad columns per row are computed and dropped). The weights
# are block diagonal [G*C, tap, G*C] so one matmul convolves all G images. ACT evacuates PSUM with
# relu(acc * bn_scale + bn_shift), keeping only the W real columns of each row.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

PSUM_F = 512


@nki.jit
def kernel(x, conv_weight, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    N, C, H, W = x.shape
    CO, CI, KH, KW = conv_weight.shape
    T = KH * KW
    PH = KH // 2
    PW = KW // 2
    out = nl.ndarray((N, CO, H, W), dtype=x.dtype, buffer=nl.shared_hbm)

    G = max(1, 128 // max(C, CO))      # images per group
    GP = G * C                         # input partitions of a full group
    GQ = G * CO                        # output partitions of a full group
    WP = W + 2 * PW
    HP = H + 2 * PH + 1                # one extra zero row: the last chunk's right taps read past the end
    R = max(1, min(H, PSUM_F // WP))   # output rows per PSUM tile
    n_chunks = (H + R - 1) // R
    n_groups = (N + G - 1) // G

    # ---- weights: block diagonal, transposed on the PE to [ci_g, tap, co_g] ----
    wnat = nl.zeros((GQ, GP, T), dtype=nl.float32, buffer=nl.sbuf)
    w_rows = conv_weight.reshape((CO, CI, T))
    for g in nl.static_range(G):
        wnat[g * CO:(g + 1) * CO, g * C:(g + 1) * C, :] = nl.load(w_rows[:, :, :])
    w_bd = nl.ndarray((GP, T, GQ), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.static_range(T):
        wt_ps = nl.transpose(wnat[:, :, t])                  # [GP, GQ] in PSUM
        w_bd[:, t, :] = nl.copy(wt_ps)

    # ---- BatchNorm (eval) folded: scale = w / sqrt(var + eps), shift = b - mean * scale ----
    bw = nl.ndarray((GQ, 1), dtype=nl.float32, buffer=nl.sbuf)
    bb = nl.ndarray((GQ, 1), dtype=nl.float32, buffer=nl.sbuf)
    bm = nl.ndarray((GQ, 1), dtype=nl.float32, buffer=nl.sbuf)
    bv = nl.ndarray((GQ, 1), dtype=nl.float32, buffer=nl.sbuf)
    for g in nl.static_range(G):
        bw[g * CO:(g + 1) * CO, :] = nl.load(bn_weight.reshape((CO, 1)))
        bb[g * CO:(g + 1) * CO, :] = nl.load(bn_bias.reshape((CO, 1)))
        bm[g * CO:(g + 1) * CO, :] = nl.load(bn_running_mean.reshape((CO, 1)))
        bv[g * CO:(g + 1) * CO, :] = nl.load(bn_running_var.reshape((CO, 1)))
    bscale = nl.multiply(bw, nl.rsqrt(nl.add(bv, 1e-5)))
    shift = nl.subtract(bb, nl.multiply(bm, bscale))

    x_rows = x.reshape((N * C, H, W))
    out_rows = out.reshape((N * CO, H * W))

    for gi in nl.static_range(n_groups):
        n0 = gi * G
        ng = min(G, N - n0)
        P = ng * C
        Q = ng * CO
        band = nl.zeros((GP, HP, WP), dtype=nl.float32, buffer=nl.sbuf)
        band[0:P, PH:PH + H, PW:PW + W] = nl.load(x_rows[n0 * C:n0 * C + P, :, :])
        flat = band.reshape((GP, HP * WP))
        res = nl.ndarray((GQ, H, W), dtype=nl.float32, buffer=nl.sbuf)
        for ch in nl.static_range(n_chunks):
            r0 = ch * R
            nr = min(R, H - r0)
            L = nr * WP
            acc = nl.zeros((GQ, R * WP), dtype=nl.float32, buffer=nl.psum)
            for t in nl.static_range(T):
                kh = t // KW
                kw = t % KW
                off = (r0 + kh) * WP + kw
                acc[0:Q, 0:L] += nisa.nc_matmul(w_bd[0:P, t, 0:Q], flat[0:P, off:off + L])
            acc3 = acc.reshape((GQ, R, WP))
            res[0:Q, r0:r0 + nr, :] = nisa.activation(op=nl.relu, data=acc3[0:Q, 0:nr, 0:W],
                                                      bias=shift[0:Q, :], scale=bscale[0:Q, :])
        nl.store(out_rows[n0 * CO:n0 * CO + Q, :], value=res.reshape((GQ, H * W))[0:Q, :])
    return out
