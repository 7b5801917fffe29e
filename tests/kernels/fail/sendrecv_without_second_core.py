# An LNC=2 kernel exchanges halves between its two cores with nisa.sendrecv, but is launched as a
# plain call: one instance, with no second core to receive from. On a device the compiler would give
# it one core; nki-agent refuses the exchange rather than simulating a partner that does not exist.
#
# entry: swap_halves
# inputs: a=float32[256,64]
# target: trn2
# expect-error: nkia_multicore_not_modelled line 25
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def swap_halves(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    for half in nl.static_range(2):
        mine = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        theirs = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=mine, src=a[half * 128:(half + 1) * 128, :])
        # The peer core's rank, 1 - c, exists only in a launch of two instances (kernel[2]); this one
        # is launched alone.
        nisa.sendrecv(src=mine, dst=theirs, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)  # Mistake
        nisa.dma_copy(dst=out[(1 - half) * 128:(2 - half) * 128, :], src=theirs)
    return out
