# An MXFP8 quantization into a plain float8 tile: nisa.quantize_mx writes the packed x4 types (four
# fp8 values per element, with their E8M0 scales in dst_scale), not unpacked float8.
#
# entry: quantize_kernel
# inputs: x=bfloat16[128,512]
# target: trn3
# expect-error: nkia_mx_dtype line 20
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def quantize_kernel(x):
    s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x)
    q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn, buffer=nl.sbuf)  # Mistake: not float8_e4m3fn_x4
    scale = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=s, dst_scale=scale)
    out = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=scale)
    return out
