# Per-row gradient clipping with a Python `if` on the computed norm: the norm is a tile whose
# values exist only when the kernel runs, so it cannot steer the trace (scale every row by
# min(1, max_norm / norm) instead).
#
# entry: clip_kernel
# inputs: g=float32[128,256]
# expect-error: err_dynamic_control_flow_not_supported line 21
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

MAX_NORM = 1.0


@nki.jit
def clip_kernel(g):
    out = nl.ndarray(g.shape, dtype=g.dtype, buffer=nl.shared_hbm)
    t = nl.load(g)
    norm = nl.sqrt(nl.sum(nl.square(t), axis=1, keepdims=True))    # [128, 1]
    if norm > MAX_NORM:  # Mistake: a runtime value
        nl.store(out, value=nl.multiply(t, nl.divide(MAX_NORM, norm)))
    else:
        nl.store(out, value=t)
    return out
