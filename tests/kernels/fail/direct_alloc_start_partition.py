# The upper half of the partitions is used for a 64-row tile placed with base_partition=32: a tile
# of 33 to 64 partitions can only start at partition 0 or 64.
#
# entry: half_kernel
# inputs: x=float32[64,256]
# expect-error: nkia_partition_start_alignment line 16
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def half_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0, base_partition=32))  # Mistake
    t[...] = nl.load(x)
    nl.store(out, value=t)
    return out
