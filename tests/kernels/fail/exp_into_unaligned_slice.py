# Rows 3.. of the tile get exp of x's first 125 rows. The compiler folds the assignment into the
# activation, so the Scalar engine writes band[3:128] itself: a compute-engine operand of more
# than 64 partitions must start at partition 0 (a load assigned there is fine: DMA has no rule).
#
# entry: shifted_exp_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_partition_start_alignment line 18
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def shifted_exp_kernel(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    band = nl.zeros((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    band[3:128, :] = nl.load(x[0:125, :])
    rows = nl.load(x[0:125, :])
    band[3:128, :] = nl.exp(rows)  # Mistake: 125 partitions starting at 3
    nl.store(out, value=band)
    return out
