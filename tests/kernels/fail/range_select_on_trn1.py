# Keeping each row's columns in [lo, hi) with nisa.range_select on trn1: range_select exists on
# NeuronCore-v3 (trn2) and later; on NeuronCore-v2 build the mask with iota and comparisons.
#
# entry: window_kernel
# target: trn1
# inputs: x=float32[128,256] lo=float32[128,1]~uniform(0,64) hi=float32[128,1]~uniform(128,256)
# expect-error: nkia_feature_not_on_target line 26
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def window_kernel(x, lo, hi):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    lo_t = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    hi_t = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=lo_t, src=lo)
    nisa.dma_copy(dst=hi_t, src=hi)
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    ge, lt = nl.greater_equal, nl.less
    nisa.range_select(dst=y, on_true_tile=t, comp_op0=ge, comp_op1=lt, bound0=lo_t, bound1=hi_t)  # Mistake
    nisa.dma_copy(dst=out, src=y)
    return out
