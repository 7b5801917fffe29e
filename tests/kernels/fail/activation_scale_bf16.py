# RMSNorm on bfloat16 rows: the per-row 1/rms factor is allocated with the input's dtype
# (bfloat16) and passed as the activation's scale, but the Scalar engine takes a float32 scale.
#
# entry: rmsnorm_kernel
# inputs: x=bfloat16[128,256]
# expect-error: err_activation_scale_invalid_type line 29
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rmsnorm_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    tile = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=x)

    sq = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=tile)
    ms = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=ms, op=nl.add, data=sq, axis=1, keepdims=True)

    rstd = nl.ndarray((rows, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=rstd, data=ms, op0=nl.multiply, operand0=1.0 / cols, op1=nl.add, operand1=1e-6)
    nisa.activation(dst=rstd, op=nl.rsqrt, data=rstd)

    y = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.copy, data=tile, scale=rstd)  # Mistake: rstd is bfloat16
    nisa.dma_copy(dst=out, src=y)
    return out
