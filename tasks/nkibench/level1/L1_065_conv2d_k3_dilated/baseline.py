# NKIBench conv2d_k3_dilated: out = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=2, dilation=2)(x),
# x [N, C_in, H, W]; the weight and bias are kernel arguments (conv_weight, conv_bias).
# Input channels are the contraction (partition) axis of the Tensor engine. The weights are
# transposed once to [C_in, KH*KW, C_out]. The output is built in blocks of rows: the block's
# padded input rows are loaded into a zeroed SBUF band (the zeros are the padding), and every
# output row accumulates, in one PSUM tile, the matmuls of each tap's weights with the matching
# (shifted, strided, dilated) input row, over all input-channel tiles. The bias is added on the
# way out of PSUM; the last block of rows may be short.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

STRIDE = 1
PAD = 2
DIL = 2


@nki.jit
def kernel(x, conv_weight, conv_bias):
    N, C_in, H, W = x.shape
    C_out, _, KH, KW = conv_weight.shape
    OH = (H + 2 * PAD - DIL * (KH - 1) - 1) // STRIDE + 1
    OW = (W + 2 * PAD - DIL * (KW - 1) - 1) // STRIDE + 1
    out = nl.ndarray((N, C_out, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax
    CI = min(C_in, P)                    # input channels per tile (the contraction)
    CO = min(C_out, P)                   # output channels per tile (PSUM partitions)
    assert C_in % CI == 0 and C_out % CO == 0 and OW <= 512
    n_ci = C_in // CI
    n_co = C_out // CO
    T = KH * KW
    R = max(1, min(OH, 2048 // OW))      # output rows per block
    BH = (R - 1) * STRIDE + DIL * (KH - 1) + 1   # padded input rows that feed them
    WP = W + 2 * PAD
    n_blocks = (OH + R - 1) // R

    # Weights with input channels on the partitions, transposed on the Tensor engine:
    #   w_sb[ci, ct, kh*KW + kw, co] = conv_weight[co, ct*CI + ci, kh, kw]
    w_sb = nl.ndarray((CI, n_ci, T, C_out), dtype=conv_weight.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((CO, n_co), dtype=conv_bias.dtype, buffer=nl.sbuf)
    w_rows = conv_weight.reshape((C_out, C_in, T))
    bias_col = conv_bias.reshape((C_out, 1))
    for cot in nl.affine_range(n_co):
        w_nat = nl.load(w_rows[cot * CO:(cot + 1) * CO, :, :])              # [CO, C_in, T]
        for ct in nl.affine_range(n_ci):
            for t in nl.affine_range(T):
                flipped = nl.transpose(w_nat[:, ct * CI:(ct + 1) * CI, t])     # [CI, CO], in PSUM
                w_sb[:, ct, t, cot * CO:(cot + 1) * CO] = nl.copy(flipped)
        b_sb[:, cot:cot + 1] = nl.load(bias_col[cot * CO:(cot + 1) * CO, 0:1])

    for n in nl.affine_range(N):
        for blk in nl.static_range(n_blocks):
            r0 = blk * R
            nr = min(R, OH - r0)
            top = r0 * STRIDE - PAD              # first (padded) input row of the block
            lo = max(0, top)
            hi = min(H, top + BH)
            # zero padding: rows and columns outside the image stay 0
            band = nl.zeros((CI, n_ci, BH, WP), dtype=x.dtype, buffer=nl.sbuf)
            for ct in nl.affine_range(n_ci):
                band[:, ct, lo - top:hi - top, PAD:PAD + W] = nl.load(x[n, ct * CI:(ct + 1) * CI, lo:hi, :])
            for cot in nl.affine_range(n_co):
                res = nl.ndarray((CO, R, OW), dtype=x.dtype, buffer=nl.sbuf)
                for r in nl.affine_range(nr):
                    # one output row: sum over channel tiles and taps of w[:, :, kh, kw] @ shifted input row
                    acc = nl.zeros((CO, OW), nl.float32, buffer=nl.psum)
                    for ct in nl.affine_range(n_ci):
                        for kh in nl.affine_range(KH):
                            for kw in nl.affine_range(KW):
                                c0 = kw * DIL
                                row = band[:, ct, r * STRIDE + kh * DIL, c0:c0 + (OW - 1) * STRIDE + 1:STRIDE]
                                acc += nl.matmul(w_sb[:, ct, kh * KW + kw, cot * CO:(cot + 1) * CO], row,
                                                 transpose_x=True)
                    res[:, r, :] = nl.add(acc, b_sb[:, cot:cot + 1])
                nl.store(out[n, cot * CO:(cot + 1) * CO, r0:r0 + nr, :], value=res[:, 0:nr, :])
    return out
