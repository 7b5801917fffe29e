# Scaling quantized MX data on the Vector engine: the engines do not compute on packed x4 tiles
# (only DMA moves them and only nc_matmul_mx reads their values), so the scale belongs on the
# bfloat16 values before quantize_mx.
#
# entry: scaled_kernel
# inputs: x=bfloat16[128,512]
# target: trn3
# expect-error: nkia_packed_dtype_operand line 22
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scaled_kernel(x):
    s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x)
    q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    scale = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=s, dst_scale=scale)
    nisa.tensor_scalar(dst=q, data=q, op0=nl.multiply, operand0=0.5)  # Mistake: arithmetic on packed data
    out = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=scale)
    return out
