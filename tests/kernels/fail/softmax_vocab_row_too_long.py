# Softmax of 32 tokens over a 66000-token vocabulary with each whole row in one tile: Vector- and
# Scalar-engine instructions read at most 64K elements per partition from SBUF, so the row has to
# be processed in chunks (with a running max and sum across them).
#
# entry: softmax_kernel
# inputs: x=bfloat16[32,66000]
# expect-error: err_size_of_dimension_exceed_arch_limit line 18
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def softmax_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nl.max(t, axis=1, keepdims=True)  # Mistake: 66000 elements per partition
    e = nl.exp(nl.subtract(t, m))
    nl.store(out, value=nl.divide(e, nl.sum(e, axis=1, keepdims=True)))
    return out
