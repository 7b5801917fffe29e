# Writing an intermediate result into an SBUF buffer with nl.store: nl.store writes HBM; on-chip
# tiles are written by assignment (buf[...] = value).
#
# entry: exp_plus_x_kernel
# inputs: x=float32[128,256]
# expect-error: err_unsupported_memory line 18
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_plus_x_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    buf = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nl.store(buf, value=nl.exp(t))  # Mistake: buf is in SBUF
    nl.store(out, value=nl.add(buf, t))
    return out
