# 2-D transpose of a [R, C] float32 tensor in [128, 128] blocks: a 2-D affine loop over the
# (R/128) x (C/128) blocks loads block (i, j), transposes it (`nl.transpose`, on the Tensor engine
# into PSUM) and stores it as block (j, i) of the [C, R] output. Re-creates the "transpose_2d" row
# of "Data movement" in trn1-measurements.md (measured at x (1024, 512), 8 x 4 blocks, out
# (512, 1024): 33 µs device p50 on trn1).
#
# entry: transpose_2d
# inputs: x=float32[256,384]
# reference: x.T
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

BLOCK = 128  # a square block: the partitions on both sides of the transpose


@nki.jit
def transpose_2d(x):
    R, C = x.shape
    assert R % BLOCK == 0 and C % BLOCK == 0, "both sides must be multiples of 128"
    out = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)

    for i in nl.affine_range(R // BLOCK):
        for j in nl.affine_range(C // BLOCK):
            block = nl.load(x[i * BLOCK:(i + 1) * BLOCK, j * BLOCK:(j + 1) * BLOCK])
            flipped = nl.transpose(block)
            nl.store(out[j * BLOCK:(j + 1) * BLOCK, i * BLOCK:(i + 1) * BLOCK], value=nl.copy(flipped))
    return out
