# Streaming elementwise sine over a [B, M, F] float32 tensor in [128, F] tiles: for every (b, m)
# one tile x[b, m*128:(m+1)*128, :] is loaded, `nl.sin(t)` is applied, and the tile is stored into
# an HBM output of the same shape. Re-creates the "sin" row of "Streaming elementwise" in
# trn1-measurements.md (measured at x (16, 512, 512), F = 512: 585 µs device p50 on trn1).
# The suite draws x from [-3.14, 3.14], the range the Scalar engine's sin is valid for (the
# device run used standard normal inputs; the latency does not depend on the values).
#
# entry: stream_sin
# inputs: x=float32[2,256,512]~uniform(-3.14,3.14)
# reference: np.sin(x)
# tolerance: atol=1e-6 rtol=1e-5
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128  # rows per tile: the partitions


@nki.jit
def stream_sin(x):
    B, M, F = x.shape
    assert M % TILE_P == 0, "rows must be a multiple of 128"
    assert F <= 512, "one [128, F] tile per step, F <= 512"
    out = nl.ndarray((B, M, F), dtype=x.dtype, buffer=nl.shared_hbm)

    for b in nl.affine_range(B):
        for m in nl.affine_range(M // TILE_P):
            t = nl.load(x[b, m * TILE_P:(m + 1) * TILE_P, :])
            r = nl.sin(t)
            nl.store(out[b, m * TILE_P:(m + 1) * TILE_P, :], value=r)
    return out
