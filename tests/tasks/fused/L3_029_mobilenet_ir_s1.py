# Fused kernel for L3_029 mobilenet_ir_s1: the whole inverted residual block per image on chip: the 1x1 expand on the PE with BN + ReLU6 on its PSUM evacuation, written straight into a zero-padded SBUF image; the 3x3 depthwise as diagonal matmuls over shifted flat views of it on the PE (seven taps) and per-channel multiply-adds on the Vector engine (two taps, reading the PE's partial sum from PSUM), BN + ReLU6 on ScalarE; the 1x1 project on the PE with BN on its evacuation. One HBM read of x, one write of the output, no HBM intermediate.
#
# task: L3_029
#
# Every BatchNorm is folded to a per-channel scale s and shift t (eval mode: s = w / sqrt(var +
# eps), t = b - mean * s), applied as activation(relu, scale=s, bias=t) on ScalarE; the upper clamp
# of ReLU6 is one Vector min per image. Channels sit on the partitions throughout: expand
# [16 ci] x [16 ci, <=512 px] -> [96, px] (whole rows per PSUM tile, written into the interior of
# the padded image); depthwise: for each PSUM tile of whole padded rows, diag(w[:, t]) [96, 96]
# against the flat padded image shifted by the tap's offset (the pad columns of the result are
# junk and never read), then the last KDV taps on the Vector engine over [96, rows, W] views;
# project [96 c] x [96 c, 512 px] -> [24, px]. Two padded images alternate, and the PE issues
# expand(n + 2), depthwise(n + 1), project(n) so it never waits on an evacuation; KDV balances
# the PE and the Vector engine under the cost model (fp32 matmuls run at a quarter rate).
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

PSUM_F = 512
KDV = 2    # depthwise taps on the Vector engine (the other 9 - KDV on the PE)
EPS = 1e-5


@nki.jit
def kernel(x, expand_conv_weight, expand_bn_weight, expand_bn_bias, expand_bn_running_mean,
           expand_bn_running_var, dw_conv_weight, dw_bn_weight, dw_bn_bias, dw_bn_running_mean,
           dw_bn_running_var, project_conv_weight, project_bn_weight, project_bn_bias,
           project_bn_running_mean, project_bn_running_var):
    N, CI, H, W = x.shape
    CE = expand_conv_weight.shape[0]
    CO = project_conv_weight.shape[0]
    HW = H * W
    HP = H + 2
    WP = W + 2
    out = nl.ndarray((N, CO, H, W), dtype=x.dtype, buffer=nl.shared_hbm)
    x3 = x.reshape((N, CI, HW))
    o3 = out.reshape((N, CO, HW))

    ident = nl.load(nl.shared_identity_matrix(128, dtype=nl.float32))

    def fold(nc, gw, gb, gm, gv):
        m = nl.ndarray((nc, 4), dtype=nl.float32, buffer=nl.sbuf)
        m[:, 0:1] = nl.load(gw.reshape((nc, 1)))
        m[:, 1:2] = nl.load(gb.reshape((nc, 1)))
        m[:, 2:3] = nl.load(gm.reshape((nc, 1)))
        m[:, 3:4] = nl.load(gv.reshape((nc, 1)))
        st = nl.ndarray((nc, 2), dtype=nl.float32, buffer=nl.sbuf)
        sc = nl.multiply(m[:, 0:1], nl.rsqrt(nl.add(m[:, 3:4], EPS)))
        st[:, 0:1] = nl.copy(sc)
        st[:, 1:2] = nl.subtract(m[:, 1:2], nl.multiply(m[:, 2:3], sc))
        return st

    # ---- weights: the 1x1 convs transposed on the PE (contraction on the partitions) ----
    we = nl.load(expand_conv_weight.reshape((CE, CI)))                   # [96, 16]
    weT = nl.ndarray((CI, CE), dtype=nl.float32, buffer=nl.sbuf)
    weT[...] = nl.copy(nl.transpose(we))                                 # [16, 96]
    wp = nl.load(project_conv_weight.reshape((CO, CE)))                  # [24, 96]
    wpT = nl.ndarray((CE, CO), dtype=nl.float32, buffer=nl.sbuf)
    wpT[...] = nl.copy(nl.transpose(wp))                                 # [96, 24]
    wd = nl.load(dw_conv_weight.reshape((CE, 9)))                        # [96, 9]
    st1 = fold(CE, expand_bn_weight, expand_bn_bias, expand_bn_running_mean, expand_bn_running_var)
    st2 = fold(CE, dw_bn_weight, dw_bn_bias, dw_bn_running_mean, dw_bn_running_var)
    st3 = fold(CO, project_bn_weight, project_bn_bias, project_bn_running_mean,
               project_bn_running_var)

    R = max(1, min(H, PSUM_F // W))            # image rows per expand PSUM tile
    RD = max(1, min(H, PSUM_F // WP))          # output rows per depthwise PSUM tile
    # padded images, one spare row: the flat views of the PE taps run past the last row
    pads = [nl.zeros((CE, HP + 1, WP), dtype=nl.float32, buffer=nl.sbuf) for _ in range(2)]
    # the depthwise taps run on the PE as diagonal matmuls diag(w[:, t]) over the flat padded
    # image (the pad columns of its PSUM rows are junk and never read)
    dS = nl.ndarray((CE, 9, CE), dtype=nl.float32, buffer=nl.sbuf)
    for t in nl.static_range(9):
        dS[:, t, :] = nisa.tensor_scalar(data=ident[0:CE, 0:CE], op0=np.multiply,
                                         operand0=wd[:, t:t + 1])

    def expand(n):
        xt = nl.load(x3[n])                                              # [16, HW]
        hp = pads[n % 2]
        for r0 in nl.static_range(0, H, R):
            nr = min(R, H - r0)
            ps = nl.ndarray((CE, PSUM_F), dtype=nl.float32, buffer=nl.psum)
            ps[:, 0:nr * W] += nisa.nc_matmul(weT, xt[:, r0 * W:(r0 + nr) * W])
            hp[:, 1 + r0:1 + r0 + nr, 1:1 + W] = nisa.activation(
                op=nl.relu, data=ps[:, 0:nr * W].reshape((CE, nr, W)), bias=st1[:, 1:2],
                scale=st1[:, 0:1])
        inner = hp[:, 1:1 + H, 1:1 + W]
        inner[...] = nisa.tensor_scalar(data=inner, op0=np.minimum, operand0=6.0)
        return hp

    def depthwise(hp):
        flat = hp.reshape((CE, (HP + 1) * WP))
        h2 = nl.ndarray((CE, H, W), dtype=nl.float32, buffer=nl.sbuf)
        for r0 in nl.static_range(0, H, RD):
            nr = min(RD, H - r0)
            L = nr * WP
            ps = nl.ndarray((CE, PSUM_F), dtype=nl.float32, buffer=nl.psum)
            for t in nl.static_range(9 - KDV):
                off = (r0 + t // 3) * WP + t % 3
                ps[:, 0:L] += nisa.nc_matmul(dS[:, t, :], flat[:, off:off + L])
            src = ps[:, 0:L].reshape((CE, nr, WP))[:, :, 0:W]
            if KDV > 0:
                acc = nl.ndarray((CE, RD, W), dtype=nl.float32, buffer=nl.sbuf)
                for t in nl.static_range(9 - KDV, 9):
                    acc[:, 0:nr, :] = nisa.scalar_tensor_tensor(
                        data=hp[:, r0 + t // 3:r0 + t // 3 + nr, t % 3:t % 3 + W], op0=np.multiply,
                        operand0=wd[:, t:t + 1], op1=np.add, operand1=src)
                    src = acc[:, 0:nr, :]
            h2[:, r0:r0 + nr, :] = nisa.activation(op=nl.relu, data=src, bias=st2[:, 1:2],
                                                   scale=st2[:, 0:1])
        h2f = h2.reshape((CE, HW))
        h2f[...] = nisa.tensor_scalar(data=h2f, op0=np.minimum, operand0=6.0)
        return h2f

    def project(n, h2):
        o_sb = nl.ndarray((CO, HW), dtype=nl.float32, buffer=nl.sbuf)
        for c0 in nl.static_range(0, HW, PSUM_F):
            cs = min(PSUM_F, HW - c0)
            ps = nl.ndarray((CO, PSUM_F), dtype=nl.float32, buffer=nl.psum)
            ps[:, 0:cs] += nisa.nc_matmul(wpT, h2[:, c0:c0 + cs])
            o_sb[:, c0:c0 + cs] = nisa.activation(op=nl.copy, data=ps[:, 0:cs], bias=st3[:, 1:2],
                                                  scale=st3[:, 0:1])
        nl.store(o3[n], value=o_sb)

    # software pipeline on the PE: expand of image n + 2 and depthwise of image n + 1 are issued
    # before the project of image n, so the PE never waits on an evacuation
    hps = {}
    h2s = {}
    for step in nl.static_range(N + 2):
        if step < N:
            hps[step] = expand(step)
        if 0 <= step - 1 < N:
            h2s[step - 1] = depthwise(hps[step - 1])
        if 0 <= step - 2 < N:
            project(step - 2, h2s[step - 2])
    return out
