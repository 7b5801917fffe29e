# |x| by clearing the sign bit with nl.bitwise_and on float32 data: bitwise operators work on
# integer tiles only (reinterpret with t.view(nl.int32) first, or simply use nl.abs).
#
# entry: abs_kernel
# inputs: x=float32[128,256]
# expect-error: nkia_bitvec_op_needs_integer line 17
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def abs_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    y = nl.bitwise_and(t, 0x7FFFFFFF)  # Mistake: t is float32
    nl.store(out, value=y)
    return out
