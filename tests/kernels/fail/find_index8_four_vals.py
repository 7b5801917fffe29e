# Looking up the positions of only the top 4 values: nc_find_index8 searches for exactly 8 values
# per partition, so vals must be [P, 8] (pass all of max8's output and keep the first 4 indices).
#
# entry: top4_index_kernel
# inputs: x=float32[128,256]
# expect-error: nkia_max8_input_size line 20
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def top4_index_kernel(x):
    P, F = x.shape
    out = nl.ndarray((P, 4), dtype=nl.uint32, buffer=nl.shared_hbm)
    t = nl.load(x)
    top = nisa.max8(src=t)
    idx = nisa.nc_find_index8(data=t, vals=top[:, 0:4])  # Mistake: vals is [128, 4]
    nl.store(out, value=idx[:, 0:4])
    return out
