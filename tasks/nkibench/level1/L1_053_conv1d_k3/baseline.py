# NKIBench conv1d_k3: out = nn.Conv1d(64, 64, kernel_size=3, stride=1, padding=1)(x),
# x [N, C_in, L]; the weight and bias are kernel arguments (conv_weight, conv_bias).
# Input channels are the contraction (partition) axis of the Tensor engine. The weights are
# transposed once to [C_in, k, C_out]. For every image and chunk of up to 512 output positions
# the padded input band is loaded (zeros where it runs past either end), and each tap k
# accumulates (the tap's weights) x (the band shifted by k, every STRIDE-th position) into one
# PSUM tile, over all input-channel tiles. The bias is added on the way out of PSUM.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

STRIDE = 1
PAD = 1


@nki.jit
def kernel(x, conv_weight, conv_bias):
    N, C_in, L = x.shape
    C_out, _, K = conv_weight.shape
    OL = (L + 2 * PAD - K) // STRIDE + 1
    out = nl.ndarray((N, C_out, OL), dtype=x.dtype, buffer=nl.shared_hbm)

    P = nl.tile_size.pmax
    CI = min(C_in, P)                    # input channels per tile (the contraction)
    CO = min(C_out, P)                   # output channels per tile (PSUM partitions)
    assert C_in % CI == 0 and C_out % CO == 0
    n_ci = C_in // CI
    n_co = C_out // CO
    R = min(OL, 512)                     # output positions per PSUM tile
    BL = (R - 1) * STRIDE + K            # input positions (padded) that feed them
    n_chunks = (OL + R - 1) // R

    # Weights with input channels on the partitions, transposed on the Tensor engine:
    #   w_sb[ci, ct, k, co] = conv_weight[co, ct*CI + ci, k]
    w_sb = nl.ndarray((CI, n_ci, K, C_out), dtype=conv_weight.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((CO, n_co), dtype=conv_bias.dtype, buffer=nl.sbuf)
    bias_col = conv_bias.reshape((C_out, 1))
    for cot in nl.affine_range(n_co):
        w_nat = nl.load(conv_weight[cot * CO:(cot + 1) * CO, :, :])         # [CO, C_in, K]
        for ct in nl.affine_range(n_ci):
            for k in nl.affine_range(K):
                flipped = nl.transpose(w_nat[:, ct * CI:(ct + 1) * CI, k])     # [CI, CO], in PSUM
                w_sb[:, ct, k, cot * CO:(cot + 1) * CO] = nl.copy(flipped)
        b_sb[:, cot:cot + 1] = nl.load(bias_col[cot * CO:(cot + 1) * CO, 0:1])

    for n in nl.affine_range(N):
        for c in nl.static_range(n_chunks):
            o0 = c * R
            nr = min(R, OL - o0)
            start = o0 * STRIDE - PAD            # first (padded) input position of the chunk
            lo = max(0, start)
            hi = min(L, start + BL)
            # zero padding: positions outside [0, L) stay 0
            band = nl.zeros((CI, n_ci, BL), dtype=x.dtype, buffer=nl.sbuf)
            for ct in nl.affine_range(n_ci):
                band[:, ct, lo - start:hi - start] = nl.load(x[n, ct * CI:(ct + 1) * CI, lo:hi])
            for cot in nl.affine_range(n_co):
                acc = nl.zeros((CO, R), nl.float32, buffer=nl.psum)
                for ct in nl.affine_range(n_ci):
                    for k in nl.affine_range(K):
                        # out[o] += w[:, :, k] @ x[o*STRIDE + k - PAD]
                        acc += nl.matmul(w_sb[:, ct, k, cot * CO:(cot + 1) * CO],
                                         band[:, ct, k:k + (R - 1) * STRIDE + 1:STRIDE], transpose_x=True)
                res = nl.add(acc, b_sb[:, cot:cot + 1], dtype=x.dtype)
                nl.store(out[n, cot * CO:(cot + 1) * CO, o0:o0 + nr], value=res[:, 0:nr])
    return out
