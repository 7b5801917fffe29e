# A column of a table, loaded with an integer index on the free axis (`a[0:128, 2]`, as the
# fused-mamba tutorials load one state column), scales every row of x: the integer index drops the
# view's free axis, and the loaded tile is the [128, 1] column it is, broadcast along x's free axis.
#
# entry: column_scale_kernel
# inputs: x=float32[128,64] a=float32[128,4]
# reference:
#   return (x * a[:, 2:3],)
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def column_scale_kernel(x, a):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    col = nl.load(a[0:128, 2])
    nl.store(out, value=nl.multiply(t, col))
    return out
