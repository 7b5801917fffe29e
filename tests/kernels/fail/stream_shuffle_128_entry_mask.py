# Reversing the order of 128 partitions with one nc_stream_shuffle and a 128-entry mask: the
# shuffle permutes within each 32-partition quadrant and takes exactly 32 mask entries.
#
# entry: reverse_rows_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_stream_shuffle_operands line 19
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def reverse_rows_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_stream_shuffle(dst=y, src=t, shuffle_mask=[P - 1 - i for i in range(P)])  # Mistake
    nisa.dma_copy(dst=out, src=y)
    return out
