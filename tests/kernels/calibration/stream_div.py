# Streaming binary division (x over y + 1e-6) of two [B, M, F] float32 tensors in [128, F] tiles: for every (b, m) the
# tiles x[b, m*128:(m+1)*128, :] and y[b, m*128:(m+1)*128, :] are loaded, `nl.divide(t, nl.add(u, 1e-6))` is
# applied, and the tile is stored into an HBM output of the same shape. Re-creates the "div" row
# of "Streaming binary" in trn1-measurements.md (measured at x, y (16, 512, 512), F = 512: 221 µs
# device p50 on trn1).
#
# entry: stream_div
# inputs: x=float32[2,256,512] y=float32[2,256,512]
# reference: x / (y + 1e-6)
# tolerance: atol=1e-6 rtol=1e-5
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128  # rows per tile: the partitions


@nki.jit
def stream_div(x, y):
    B, M, F = x.shape
    assert tuple(y.shape) == (B, M, F), "x and y must have the same shape"
    assert M % TILE_P == 0, "rows must be a multiple of 128"
    assert F <= 512, "one [128, F] tile per step, F <= 512"
    out = nl.ndarray((B, M, F), dtype=x.dtype, buffer=nl.shared_hbm)

    for b in nl.affine_range(B):
        for m in nl.affine_range(M // TILE_P):
            t = nl.load(x[b, m * TILE_P:(m + 1) * TILE_P, :])
            u = nl.load(y[b, m * TILE_P:(m + 1) * TILE_P, :])
            r = nl.divide(t, nl.add(u, 1e-6))
            nl.store(out[b, m * TILE_P:(m + 1) * TILE_P, :], value=r)
    return out
