# exp of the even rows of a loaded [128, 64] tile, taken with a stepped slice t[0:128:2, :]: an
# engine operand covers consecutive partitions, so a partition step cannot be addressed on chip
# (load the even rows into a tile of their own, or move the step to a free axis).
#
# entry: even_rows_exp_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_partition_not_contiguous line 16
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def even_rows_exp_kernel(x):
    out = nl.ndarray((64, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    y = nl.exp(t[0:128:2, :])  # Mistake: partition step 2
    nl.store(out, value=y)
    return out
