# Turning the column index into "every other column" by assigning into the nl.mgrid index tile:
# index expressions are not data and cannot be written (build a new one, 2 * i.x, or materialise
# the values with nisa.iota).
#
# entry: even_columns_kernel
# inputs: x=float32[128,128]
# expect-error: err_cannot_assign_to_index line 18
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def even_columns_kernel(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.mgrid[0:128, 0:64]
    i.x[...] = 2 * i.x  # Mistake: writes into an index expression
    nl.store(out, value=nl.load(x[i.p, i.x]))
    return out
