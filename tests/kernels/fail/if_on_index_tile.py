# Ragged rows guarded by a Python `if` on the index tile instead of a mask: `r < rows` holds for
# some partitions and not others, so there is no single branch for the tracer to take.
#
# entry: exp_kernel
# inputs: x=float32[200,64]
# expect-error: err_control_flow_condition_depending_on_arange line 19
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        r = t * 128 + ip
        if r < rows:  # Mistake: use mask=(r < rows) on the load and the store
            tile = nl.load(x[r, jf])
            nl.store(out[r, jf], value=nl.exp(tile))
    return out
