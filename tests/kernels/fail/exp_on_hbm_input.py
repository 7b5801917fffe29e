# Computing on the kernel's HBM input without loading it first: compute APIs read SBUF or PSUM
# tiles, never HBM (nl.exp(nl.load(x))).
#
# entry: exp_kernel
# inputs: x=float32[128,256]
# expect-error: err_unsupported_memory line 14
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    y = nl.exp(x)  # Mistake: x is in HBM
    nl.store(out, value=y)
    return out
