# Loading x transposed by swapping the index tiles, x[jf, ip]: the partition index must index the
# tensor's first axis (load as is and transpose on chip, or use nl.load_transpose2d).
#
# entry: load_transposed_kernel
# inputs: x=float32[64,128]
# expect-error: nkia_partition_index_not_first line 19
# status: known-failure an index tile of any axis is accepted on any tensor dimension; the load
#   happens transposed
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def load_transposed_kernel(x):
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(cols)[:, None]
    jf = nl.arange(rows)[None, :]
    xT = nl.load(x[jf, ip])  # Mistake: the partition index is on x's second axis
    nl.store(out, value=xT)
    return out
