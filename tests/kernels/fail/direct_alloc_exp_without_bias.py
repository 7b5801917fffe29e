# A direct-allocation kernel (every on-chip tile placed with ncc.sbuf.mod_alloc) that calls nl.exp:
# there the compiler cannot add the hidden zero bias of an activation, so call nisa.activation with
# an explicit, allocated [P, 1] bias tile.
#
# entry: exp_kernel
# inputs: x=float32[128,256]
# expect-error: err_bias_tensor_must_be_specified_in_allocation line 20
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=F * 4))
    t[...] = nl.load(x)
    y[...] = nl.exp(t)  # Mistake: no explicit bias tile
    nl.store(out, value=y)
    return out
