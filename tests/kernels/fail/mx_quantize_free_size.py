# nisa.quantize_mx packs four source values into each x4 element: a [128, 512] bfloat16 source
# quantizes into a [128, 128] destination. This one keeps the source's free size.
#
# entry: quantize_kernel
# inputs: x=bfloat16[128,512]
# target: trn3
# expect-error: nkia_mx_layout line 20
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def quantize_kernel(x):
    s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x)
    q = nl.ndarray((128, 512), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)  # Mistake: should be [128, 128]
    scale = nl.ndarray((128, 512), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=s, dst_scale=scale)
    out = nl.ndarray((128, 512), dtype=nl.uint8, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=scale)
    return out
