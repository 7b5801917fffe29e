# Gathering embedding rows and transposing them in one nl.load_transpose2d: the DMA transpose
# needs addresses known at compile time (gather with nl.load, then nl.transpose on chip).
#
# entry: embedding_t_kernel
# inputs: table=float32[512,128] ids=int32[64,1]~uniform(0,512)
# expect-error: err_indirect_indices_are_not_supported_with_nki_api line 21
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def embedding_t_kernel(table, ids):
    V, D = table.shape
    n = ids.shape[0]
    out = nl.ndarray((D, n), dtype=table.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(n)[:, None]
    jf = nl.arange(D)[None, :]
    idx = nl.load(ids)
    embT = nl.load_transpose2d(table[idx[ip, 0], jf])  # Mistake: runtime indices
    nl.store(out, value=embT)
    return out
