# A kernel processes as many row tiles as a count it reads from memory, through a register and
# nl.dynamic_range: its trip count is known only on the device, so a computing run refuses it (a
# timing-only check traces the body once, as the compiler compiles it).
#
# entry: first_tiles_kernel
# inputs: x=float32[512,64] count=int32[1,1]
# target: trn2
# expect-error: nkia_dynamic_loop_not_computed line 25
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def first_tiles_kernel(x, count):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    n = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=n, src=count)
    reg = nisa.register_alloc()
    nisa.register_load(reg, n)
    offset = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=offset, value=0)
    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    for _ in nl.dynamic_range(0, reg):  # Mistake: the trip count is a run-time value
        nisa.dma_copy(dst=t, src=x.ap(pattern=[[64, 128], [1, 64]], scalar_offset=offset, indirect_dim=0))
        nisa.dma_copy(dst=out.ap(pattern=[[64, 128], [1, 64]], scalar_offset=offset, indirect_dim=0), src=t)
        nisa.tensor_scalar(dst=offset, data=offset, op0=nl.add, operand0=128)
    return out
