# 200 rows processed in 128-row tiles with slices: the second tile's x[128:256] runs past the end of
# the input (the last tile is min(P, rows - t * P) rows long).
#
# entry: exp_kernel
# inputs: x=float32[200,64]
# expect-error: err_tensor_access_out_of_bound line 20
import nki
import nki.isa as nisa
import nki.language as nl

P = 128


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in range((rows + P - 1) // P):
        tile = nl.ndarray((P, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[t * P:(t + 1) * P, :])  # Mistake: no ragged last tile
        y = nl.ndarray((P, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.activation(dst=y, op=nl.exp, data=tile)
        nisa.dma_copy(dst=out[t * P:(t + 1) * P, :], src=y)
    return out
