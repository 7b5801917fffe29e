# Row softmax along the free axis, current dialect: the negated row max (tensor_reduce with
# negate=True) is the bias of one fused exp activation, exp(x - max); tensor_reduce sums the row and
# tensor_scalar divides every element by its row's [P, 1] sum.
#
# entry: softmax_kernel
# inputs: x=float32[256,384]
# reference:
#   e = np.exp(x - x.max(axis=1, keepdims=True))
#   return e / e.sum(axis=1, keepdims=True)
# tolerance: atol=1e-6 rtol=1e-5
import nki
import nki.isa as nisa
import nki.language as nl

P = 128


@nki.jit
def softmax_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in range(rows // P):
        tile = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[t * P:(t + 1) * P, :])

        neg_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=tile, axis=1, negate=True, keepdims=True)

        e = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=tile, bias=neg_max, scale=1.0)

        row_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=row_sum, op=nl.add, data=e, axis=1, keepdims=True)

        probs = nl.ndarray((P, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=probs, data=e, op0=nl.divide, operand0=row_sum)
        nisa.dma_copy(dst=out[t * P:(t + 1) * P, :], src=probs)
    return out
