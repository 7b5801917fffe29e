# 2-D transpose of a [rows, cols] tensor in 128 x 128 blocks: block (i, j) of the input is read,
# turned on the Tensor engine, and written as block (j, i) of the output.
#
# entry: transpose_kernel
# inputs: x=float32[256,384]
# reference: x.T
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transpose_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    B = 128
    ib = nl.arange(B)[:, None]
    jb = nl.arange(B)[None, :]
    for i in nl.affine_range(rows // B):
        for j in nl.affine_range(cols // B):
            block = nl.load(x[i * B + ib, j * B + jb])
            flipped = nl.transpose(block)               # [B, B] in PSUM
            nl.store(out[j * B + ib, i * B + jb], value=nl.copy(flipped))
    return out
