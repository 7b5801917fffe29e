# The first 16 rows of the tile are prompt tokens handled elsewhere, and exp runs on the other 112
# as t[16:128]: an operand of more than 64 partitions must start at partition 0.
#
# entry: tail_exp_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_partition_start_alignment line 16
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def tail_exp_kernel(x):
    out = nl.ndarray((112, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    y = nl.exp(t[16:128, :])  # Mistake: 112 partitions starting at 16
    nl.store(out, value=y)
    return out
