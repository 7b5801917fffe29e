# 2 x 2 max pooling with stride 2 of [C, H, W] channel planes, current dialect: the planes are
# loaded whole, and an access pattern (.ap) over the SBUF tile walks them as [C, H/2, W/2, 2, 2]
# windows for one tensor_reduce over the two trailing axes.
#
# entry: maxpool_kernel
# inputs: x=float32[128,16,24]
# reference: x.reshape(128, 8, 2, 12, 2).max(axis=(2, 4))
# tolerance: atol=0 rtol=0
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def maxpool_kernel(x):
    C, H, W = x.shape
    OH, OW = H // 2, W // 2
    out = nl.ndarray((C, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)
    planes = nl.ndarray((C, H, W), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=planes, src=x)
    windows = planes.ap(pattern=[[H * W, C], [2 * W, OH], [2, OW], [W, 2], [1, 2]])
    pooled = nl.ndarray((C, OH, OW), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=pooled, op=nl.maximum, data=windows, axis=(3, 4))
    nisa.dma_copy(dst=out, src=pooled)
    return out
