# Choosing the engine of a copy by its hardware name, engine="dve": the engine is one of the nisa
# engine constants (nisa.vector_engine for the DVE).
#
# entry: copy_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_unknown_engine line 19
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def copy_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    c = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=c, src=t, engine="dve")  # Mistake: not an engine constant
    nisa.dma_copy(dst=out, src=c)
    return out
