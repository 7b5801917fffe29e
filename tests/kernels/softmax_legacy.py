# Row softmax along the free axis, 128 rows per tile: subtract the row max (for range), exponentiate
# on the Scalar engine, sum the row, divide.
#
# entry: softmax_kernel
# inputs: x=float32[256,384]
# reference:
#   e = np.exp(x - x.max(axis=1, keepdims=True))
#   return e / e.sum(axis=1, keepdims=True)
# tolerance: atol=1e-6 rtol=1e-5
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def softmax_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.affine_range(rows // 128):
        tile = nl.load(x[t * 128 + ip, jf])
        row_max = nl.max(tile, axis=1, keepdims=True)          # [128, 1]
        e = nl.exp(nl.subtract(tile, row_max))                 # [128, 1] broadcast along the row
        row_sum = nl.sum(e, axis=1, keepdims=True)
        probs = nl.divide(e, row_sum)
        nl.store(out[t * 128 + ip, jf], value=probs)
    return out
