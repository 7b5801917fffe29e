# A direct-allocation kernel that parks an intermediate in an internal HBM tensor (buffer=nl.hbm):
# such kernels can only have their inputs, outputs and constants in HBM.
#
# entry: twice_kernel
# inputs: x=float32[128,512]
# expect-error: nkia_direct_allocation_internal_hbm line 17
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def twice_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    spill = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.hbm)  # Mistake: an internal HBM tensor
    t[...] = nl.load(x)
    nl.store(spill, value=t)
    t[...] = nl.load(spill)
    nl.store(out, value=t)
    return out
