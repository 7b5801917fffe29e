# Fused kernel for L2_006 conv2d_bn_relu_k3: 3x3 conv on the PE with the even and odd padded rows of one image stacked on the partitions, so 6 matmuls of 128 x 128 (75% useful) produce an even and an odd output row per position; eval BatchNorm folded to a per-channel scale/shift and applied with ReLU on the PSUM evacuation.
#
# task: L2_006
#
# Layout: partitions 0..C-1 hold the padded image's even rows E[i] = prow[2i], partitions C..2C-1
# its odd rows O[i] = prow[2i+1], each flat with row pitch WP = W + 2. Output row 2i needs
# (E[i], O[i], E[i+1]) and row 2i+1 needs (O[i], E[i+1], O[i+1]); so for each column tap kw the
# moving slice at row offset a = 0 ([E[i]; O[i]]) and a = 1 ([E[i+1]; O[i+1]]) feeds both: the
# stationary's first C columns give the even output row, the last CO its odd neighbour:
#   a = 0: even += W0 E + W1 O, odd += W0 O;      a = 1: even += W2 E, odd += W1 E + W2 O.
# Both halves of PSUM are evacuated by one ACT instruction, relu(acc * bn_scale + bn_shift), and
# stored to the even / odd rows of the output. The two pad columns of each row are computed and
# dropped.
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

PSUM_F = 512


@nki.jit
def kernel(x, conv_weight, bn_weight, bn_bias, bn_running_mean, bn_running_var):
    N, C, H, W = x.shape
    CO, CI, KH, KW = conv_weight.shape
    T = KH * KW
    out = nl.ndarray((N, CO, H, W), dtype=x.dtype, buffer=nl.shared_hbm)

    WP = W + 2
    NE = (H + 1) // 2                  # even output rows (and i-rows of the layout)
    NO = H // 2                        # odd output rows
    NR = NE + 2                        # rows of E / O kept (one spare for the last taps' overrun)
    R = max(1, min(NE, PSUM_F // WP))  # i-rows per PSUM tile
    n_chunks = (NE + R - 1) // R

    def load_band(n):
        band = nl.zeros((2 * C, NR, WP), dtype=nl.float32, buffer=nl.sbuf)
        # E[i] = padded row 2i = image row 2i - 1 (E[0] is the top pad)
        ne = H // 2                    # image rows 1, 3, ...
        if ne > 0:
            band[0:C, 1:1 + ne, 1:1 + W] = nl.load(x[n, :, 1:2 * ne:2, :])
        # O[i] = padded row 2i + 1 = image row 2i
        no = (H + 1) // 2              # image rows 0, 2, ...
        band[C:2 * C, 0:no, 1:1 + W] = nl.load(x[n, :, 0:2 * no - 1:2, :])
        return band.reshape((2 * C, NR * WP))

    bands = [load_band(0)]

    # ---- stationaries S[a, kw] [(half, ci), (blk, co)], built in natural layout and transposed ----
    wn = nl.ndarray((2 * CO, CI, T), dtype=nl.float32, buffer=nl.sbuf)
    w_rows = conv_weight.reshape((CO, CI, T))
    wn[0:CO, :, :] = nl.load(w_rows[:, :, :])
    wn[CO:2 * CO, :, :] = nl.load(w_rows[:, :, :])
    # kh of block (blk, half) for a = 0, 1 (-1: zero block); blk 0 = even output, half 0 = E
    KHS = [[[0, 1], [-1, 0]], [[2, -1], [1, 2]]]
    nat = nl.zeros((2 * CO, 2 * KW, 2 * CI), dtype=nl.float32, buffer=nl.sbuf)
    cnt = 0
    for a in nl.static_range(2):
        for kw in nl.static_range(KW):
            for blk in nl.static_range(2):
                for half in nl.static_range(2):
                    kh = KHS[a][blk][half]
                    if kh >= 0:
                        src = wn[blk * CO:(blk + 1) * CO, :, kh * KW + kw]
                        dst = nat[blk * CO:(blk + 1) * CO, a * KW + kw, half * CI:(half + 1) * CI]
                        if cnt % 2 == 0:
                            dst[...] = nl.copy(src)
                        else:
                            dst[...] = nisa.activation(op=nl.copy, data=src)
                        cnt += 1
    wS = nl.ndarray((2 * CI, 2 * KW, 2 * CO), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.static_range(2 * KW):
        wS[:, j, :] = nl.copy(nl.transpose(nat[:, j, :]))

    # ---- BatchNorm (eval) folded: scale = w / sqrt(var + eps), shift = b - mean * scale, for
    #      both output halves ----
    bw = nl.ndarray((2 * CO, 1), dtype=nl.float32, buffer=nl.sbuf)
    bb = nl.ndarray((2 * CO, 1), dtype=nl.float32, buffer=nl.sbuf)
    bm = nl.ndarray((2 * CO, 1), dtype=nl.float32, buffer=nl.sbuf)
    bv = nl.ndarray((2 * CO, 1), dtype=nl.float32, buffer=nl.sbuf)
    for g in nl.static_range(2):
        bw[g * CO:(g + 1) * CO, :] = nl.load(bn_weight.reshape((CO, 1)))
        bb[g * CO:(g + 1) * CO, :] = nl.load(bn_bias.reshape((CO, 1)))
        bm[g * CO:(g + 1) * CO, :] = nl.load(bn_running_mean.reshape((CO, 1)))
        bv[g * CO:(g + 1) * CO, :] = nl.load(bn_running_var.reshape((CO, 1)))
    bscale = nl.multiply(bw, nl.rsqrt(nl.add(bv, 1e-5)))
    shift = nl.subtract(bb, nl.multiply(bm, bscale))

    for n in nl.static_range(N):
        if n + 1 < N:
            bands.append(load_band(n + 1))
        flat = bands[n]
        res = nl.ndarray((2 * CO, NE, W), dtype=nl.float32, buffer=nl.sbuf)
        for ch in nl.static_range(n_chunks):
            i0 = ch * R
            nr = min(R, NE - i0)
            L = nr * WP
            acc = nl.zeros((2 * CO, R * WP), dtype=nl.float32, buffer=nl.psum)
            for a in nl.static_range(2):
                for kw in nl.static_range(KW):
                    off = (i0 + a) * WP + kw
                    acc[:, 0:L] += nisa.nc_matmul(wS[:, a * KW + kw, :], flat[:, off:off + L])
            acc3 = acc.reshape((2 * CO, R, WP))
            res[:, i0:i0 + nr, :] = nisa.activation(op=nl.relu, data=acc3[:, 0:nr, 0:W],
                                                    bias=shift, scale=bscale)
        nl.store(out[n, :, 0:2 * NE - 1:2, :], value=res[0:CO, 0:NE, :])
        if NO > 0:
            nl.store(out[n, :, 1:2 * NO:2, :], value=res[CO:2 * CO, 0:NO, :])
    return out
