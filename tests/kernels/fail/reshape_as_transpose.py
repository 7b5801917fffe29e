# "Transposing" an SBUF tile with .reshape: a reshape keeps the elements in order, and [128, 64]
# -> [64, 128] would move data across partitions, which no SBUF view can do (use nc_transpose).
#
# entry: transpose_kernel
# inputs: x=float32[128,64]
# expect-error: nkia_bad_shape line 18
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose_kernel(x):
    P, F = x.shape
    out = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    tT = t.reshape((F, P))  # Mistake: changes the partition dimension
    nisa.dma_copy(dst=out, src=tT)
    return out
