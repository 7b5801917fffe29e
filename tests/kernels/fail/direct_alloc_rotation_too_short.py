# A modulo allocation with too few physical tiles: all four blocks of `rows` are loaded before any
# is used, but num_free_tiles=(2,) gives them two physical tiles, so block 2 lands on block 0's
# bytes while block 0 still waits to be read (give it num_free_tiles=(4,), or use each block right
# after loading it).
#
# entry: row_sum_kernel
# inputs: x=float32[512,256]
# expect-error: nkia_allocation_overlap line 27
import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl


@nki.jit
def row_sum_kernel(x):
    R, F = x.shape
    RT = R // 128
    out = nl.ndarray((R, F), dtype=x.dtype, buffer=nl.shared_hbm)
    rows = nl.ndarray((RT, nl.par_dim(128), F), dtype=x.dtype,
                      buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))  # Mistake: 2 tiles for 4 blocks
    res = nl.ndarray((RT, nl.par_dim(128), F), dtype=x.dtype,
                     buffer=ncc.sbuf.mod_alloc(base_addr=2 * F * 4, num_free_tiles=(RT,)))
    for r in nl.sequential_range(RT):
        rows[r] = nl.load(x[r * 128:(r + 1) * 128, :])
    for r in nl.sequential_range(RT):
        # rows[0] is read here, after rows[2] was loaded into the same bytes.
        res[r] = nl.multiply(rows[r], 2.0)
        nl.store(out[r * 128:(r + 1) * 128, :], value=res[r])
    return out
