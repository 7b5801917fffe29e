# Transposing a [128, 4, 32] tile (four heads of 32 columns) with one nl.transpose: it takes 2-D
# tiles only; transpose each head's [128, 32] slice.
#
# entry: transpose_heads_kernel
# inputs: x=float32[128,4,32]
# expect-error: err_exceed_max_supported_dimension line 16
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def transpose_heads_kernel(x):
    P, H, D = x.shape
    out = nl.ndarray((H, D, P), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    tT = nl.transpose(t)  # Mistake: t is 3-D
    for h in nl.affine_range(H):
        nl.store(out[h], value=nl.copy(tT[h]))
    return out
