# An embedding lookup whose token ids run up to 599 for a table of 512 rows (the vocabulary size
# changed, the table did not): an indirect row index outside the table faults on hardware.
#
# entry: embedding_kernel
# inputs: table=float32[512,64] ids=int32[128,1]~uniform(0,600)
# expect-error: nkia_indirect_index_out_of_bounds line 20
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def embedding_kernel(table, ids):
    V, D = table.shape
    out = nl.ndarray((128, D), dtype=table.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(D)[None, :]
    idx = nl.load(ids)
    rows = nl.load(table[idx[ip, 0], jf])  # Mistake: some ids are >= 512
    nl.store(out, value=rows)
    return out
