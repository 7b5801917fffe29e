# An embedding lookup that indexes the table with the token ids straight from HBM: an indirect
# index must be an int32/uint32 tile in SBUF (nl.load the ids first).
#
# entry: embedding_kernel
# inputs: table=float32[512,64] ids=int32[128,1]~uniform(0,512)
# expect-error: nkia_indirect_index_tile line 19
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
    rows = nl.load(table[ids[ip, 0], jf])  # Mistake: ids is in HBM
    nl.store(out, value=rows)
    return out
