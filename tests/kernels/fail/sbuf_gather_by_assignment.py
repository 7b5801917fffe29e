# A small lookup table kept in SBUF and gathered from with runtime indices through plain
# assignment: an on-chip copy with runtime indices needs nisa.tensor_copy_dynamic_src (or gather
# the rows from HBM with nl.load).
#
# entry: lookup_kernel
# inputs: table=float32[128,64] ids=int32[128,1]~uniform(0,128)
# expect-error: err_copy_dynamic_indirect_indices_not_natively_supported line 23
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def lookup_kernel(table, ids):
    P, D = table.shape
    out = nl.ndarray((P, D), dtype=table.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(P)[:, None]
    jf = nl.arange(D)[None, :]
    tab = nl.load(table)
    idx = nl.load(ids)
    rows = nl.ndarray((P, D), dtype=table.dtype, buffer=nl.sbuf)
    rows[ip, jf] = tab[idx[ip, 0], jf]  # Mistake: runtime indices into an SBUF tile
    nl.store(out, value=rows)
    return out
