# 2 x 2 max pooling with stride 2 of [C, H, W] channel planes, a channel per partition. One load
# with a 5-D index space [C, H/2, W/2, 2, 2] (affine free indices 2*oh + ph, 2*ow + pw) puts each
# window on the two trailing axes, which one reduction collapses.
#
# entry: maxpool_kernel
# inputs: x=float32[128,16,24]
# reference: x.reshape(128, 8, 2, 12, 2).max(axis=(2, 4))
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def maxpool_kernel(x):
    C, H, W = x.shape
    OH, OW = H // 2, W // 2
    out = nl.ndarray((C, OH, OW), dtype=x.dtype, buffer=nl.shared_hbm)
    i_c, i_oh, i_ow, i_ph, i_pw = nl.mgrid[0:C, 0:OH, 0:OW, 0:2, 0:2]
    windows = nl.load(x[i_c, 2 * i_oh + i_ph, 2 * i_ow + i_pw])     # [C, OH, OW, 2, 2]
    pooled = nl.max(windows, axis=[3, 4])                             # [C, OH, OW]
    nl.store(out, value=pooled)
    return out
