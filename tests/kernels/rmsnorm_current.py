# RMS normalisation over the free axis, current dialect: y = x * rsqrt(mean(x^2) + eps), with the
# square on the Scalar engine, the row sum on the Vector engine, 1/F and eps folded into one
# two-op tensor_scalar, rsqrt on the Scalar engine, and a tensor_scalar that scales each row by
# its [P, 1] factor.
#
# entry: rmsnorm_kernel
# inputs: x=float32[384,256]
# args: eps=1e-6
# reference: x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
# tolerance: atol=1e-5 rtol=1e-4
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rmsnorm_kernel(x, eps):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in range(rows // 128):
        tile = nl.ndarray((128, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])

        sq = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=sq, op=nl.square, data=tile)
        sq_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=sq_sum, op=nl.add, data=sq, axis=1, keepdims=True)

        ms_eps = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=ms_eps, data=sq_sum, op0=nl.multiply, operand0=1.0 / F, op1=nl.add, operand1=eps)
        inv_rms = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=inv_rms, op=nl.rsqrt, data=ms_eps)

        y = nl.ndarray((128, F), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=tile, op0=nl.multiply, operand0=inv_rms)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=y)
    return out
