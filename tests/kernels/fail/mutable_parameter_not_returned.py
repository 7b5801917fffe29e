# Updating running statistics in place: `stats` is declared nt.mutable_tensor and written, but the
# kernel returns only its normal output, so the caller never sees the update (return it too).
#
# entry: normalize_kernel
# inputs: x=float32[128,64] stats=float32[128,1]
# expect-error: err_mutable_parameter_not_returned line 21
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt


@nki.jit
def normalize_kernel(x, stats: nt.mutable_tensor):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    s = nl.load(stats)
    nl.store(stats, value=nl.add(s, nl.sum(t, axis=1, keepdims=True)))
    nl.store(out, value=nl.subtract(t, nl.mean(t, axis=1, keepdims=True)))
    return out  # Mistake: stats is written but not returned
