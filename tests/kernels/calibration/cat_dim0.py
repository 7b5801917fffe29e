# torch.cat((x, x), dim=0) for a [R, F] float32 tensor: each [128, F] row tile r is loaded once and
# stored twice, at output rows r and r + R of the [2R, F] output. Re-creates the "cat_dim0" row of
# "Data movement" in trn1-measurements.md (measured at x (512, 512), 4 row tiles, out (1024, 512):
# 20 µs device p50 on trn1).
#
# entry: cat_dim0
# inputs: x=float32[256,512]
# reference: np.concatenate([x, x], axis=0)
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128  # rows per tile: the partitions


@nki.jit
def cat_dim0(x):
    R, F = x.shape
    assert R % TILE_P == 0, "rows must be a multiple of 128"
    assert F <= 512, "one [128, F] tile per step, F <= 512"
    out = nl.ndarray((2 * R, F), dtype=x.dtype, buffer=nl.shared_hbm)

    for r in nl.affine_range(R // TILE_P):
        t = nl.load(x[r * TILE_P:(r + 1) * TILE_P, :])
        nl.store(out[r * TILE_P:(r + 1) * TILE_P, :], value=t)
        nl.store(out[R + r * TILE_P:R + (r + 1) * TILE_P, :], value=t)
    return out
