# Loading the even rows with x[2 * ip, jf]: the partition index must have unit stride (view x as
# [n, 2, F] and take [ip, 0, jf] instead).
#
# entry: even_rows_kernel
# inputs: x=float32[256,64]
# expect-error: nkia_partition_not_contiguous line 18
# status: known-failure a strided partition index is accepted as an ordinary access pattern
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def even_rows_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((rows // 2, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(rows // 2)[:, None]
    jf = nl.arange(cols)[None, :]
    even = nl.load(x[2 * ip, jf])  # Mistake: partition stride 2
    nl.store(out[ip, jf], value=even)
    return out
