# "Is any flag set in each column": the 0/1 flags are float32, and a bitwise_or across the
# partitions needs integer tiles (nl.maximum does the same on float flags).
#
# entry: any_flag_kernel
# inputs: flags=float32[128,64]~uniform(0,1)
# expect-error: nkia_bitvec_op_needs_integer line 19
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def any_flag_kernel(flags):
    P, F = flags.shape
    out = nl.ndarray((1, F), dtype=flags.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=flags.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=flags)
    any_set = nl.ndarray((1, F), dtype=flags.dtype, buffer=nl.sbuf)
    nisa.tensor_partition_reduce(dst=any_set, op=nl.bitwise_or, data=t)  # Mistake: float data
    nisa.dma_copy(dst=out, src=any_set)
    return out
