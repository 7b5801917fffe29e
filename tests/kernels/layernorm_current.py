# Layer normalisation over the free axis, current dialect:
#   y = (x - mean) * rsqrt(var + eps) * gamma + beta
# tensor_reduce sums give the mean and the variance; tensor_scalar with [P, 1] operands centres the
# rows and, in one two-op instruction, centres and scales them. gamma and beta are passed
# pre-broadcast as [rows, F]: a [1, F] vector cannot be broadcast across partitions by the
# simulator yet.
#
# entry: layernorm_kernel
# inputs: x=float32[256,512] gamma=float32[256,512]~uniform(0.5,1.5) beta=float32[256,512]
# reference:
#   mean = x.mean(axis=1, keepdims=True)
#   var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
#   return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
# tolerance: atol=1e-5 rtol=1e-4
import nki
import nki.isa as nisa
import nki.language as nl

P = 128
EPS = 1e-5


@nki.jit
def layernorm_kernel(x, gamma, beta):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in range(rows // P):
        rs = nl.ds(t * P, P)
        tile = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        g = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        b = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[rs, :])
        nisa.dma_copy(dst=g, src=gamma[rs, :])
        nisa.dma_copy(dst=b, src=beta[rs, :])

        # mean = sum(x) / F
        row_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=row_sum, op=nl.add, data=tile, axis=1, keepdims=True)
        mean = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mean, data=row_sum, op0=nl.multiply, operand0=1.0 / F)

        # var = sum((x - mean)^2) / F
        centred = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=centred, data=tile, op0=nl.subtract, operand0=mean)
        sq = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=sq, op=nl.square, data=centred)
        sq_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=sq_sum, op=nl.add, data=sq, axis=1, keepdims=True)

        # rstd = rsqrt(var + eps)
        var_eps = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=var_eps, data=sq_sum, op0=nl.multiply, operand0=1.0 / F,
                           op1=nl.add, operand1=EPS)
        rstd = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=var_eps)

        # (x - mean) * rstd in one instruction, then * gamma + beta
        normed = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=normed, data=tile, op0=nl.subtract, operand0=mean, op1=nl.multiply, operand1=rstd)
        scaled = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=scaled, data1=normed, data2=g, op=nl.multiply)
        y = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=y, data1=scaled, data2=b, op=nl.add)
        nisa.dma_copy(dst=out[rs, :], src=y)
    return out
