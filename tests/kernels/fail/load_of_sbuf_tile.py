# A helper written for HBM inputs calls nl.load on its argument, and the kernel passes it a tile
# that is already in SBUF: nl.load moves data from HBM only.
#
# entry: gelu_kernel
# inputs: x=float32[128,256]
# expect-error: err_unsupported_memory line 14
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


def gelu_tile(src):
    return nl.gelu(nl.load(src))  # Mistake: src is an SBUF tile here


@nki.jit
def gelu_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=gelu_tile(nl.multiply(t, 2.0)))
    return out
