# NKIBench permute_4d: out = x.permute(0, 2, 3, 1), NCHW -> NHWC.
# Per batch item, x[n] is the 2-D matrix [C, H*W] and out[n] is its transpose [H*W, C]. The matrix is
# cut into 128 x 128 blocks: block (i, j) is loaded with channels on the partitions, flipped on the
# Tensor engine (nl.transpose into PSUM), copied to SBUF and stored as block (j, i) of out[n].
# Edge blocks (C or H*W not a multiple of 128) are masked on load and store.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    N, C, H, W = x.shape
    HW = H * W
    out = nl.ndarray((N, H, W, C), dtype=x.dtype, buffer=nl.shared_hbm)
    xv = x.reshape((N, C, HW))       # [n, c, h*W + w]
    ov = out.reshape((N, HW, C))     # [n, h*W + w, c]

    B = nl.tile_size.pmax    # 128
    ip = nl.arange(B)[:, None]
    jf = nl.arange(B)[None, :]
    for n in nl.affine_range(N):
        for i in nl.affine_range((C + B - 1) // B):
            for j in nl.affine_range((HW + B - 1) // B):
                block = nl.load(xv[n, i * B + ip, j * B + jf], mask=(i * B + ip < C) & (j * B + jf < HW))
                flipped = nl.copy(nl.transpose(block))
                nl.store(ov[n, j * B + ip, i * B + jf], value=flipped,
                         mask=(j * B + ip < HW) & (i * B + jf < C))
    return out
