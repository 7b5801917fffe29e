# A per-partition gather with nisa.local_gather whose indices were loaded as int32: local_gather
# reads uint16 indices (nl.load(idx, dtype=nl.uint16)).
#
# entry: gather_kernel
# inputs: src=float32[128,64] idx=int32[128,4]~uniform(0,64)
# expect-error: nkia_local_gather_layout line 19
#
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def gather_kernel(src, idx):
    P, F = src.shape
    out = nl.ndarray((P, 64), dtype=src.dtype, buffer=nl.shared_hbm)
    s = nl.load(src)
    i = nl.load(idx)
    g = nisa.local_gather(src_buffer=s, index=i, num_elem_per_idx=1)  # Mistake: int32 indices
    nl.store(out, value=g)
    return out
