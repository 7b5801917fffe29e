# Two cores of an LNC=2 logical core each write half of a shared HBM tensor and meet at a
# nisa.core_barrier before reading the other half, but the barrier sits inside a branch that only
# core 0 takes: core 0 waits for a core that has already returned, forever on a device.
#
# entry: lnc2
# inputs: x=float32[256,64]
# target: trn2
# expect-error: nkia_multicore_deadlock line 24
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def halves_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rank = nl.program_id(0)
    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[nl.ds(rank * 128, 128), :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out[nl.ds(rank * 128, 128), :], src=t)
    if rank == 0:
        nisa.core_barrier(out, (0, 1))  # Mistake: core 1 never reaches this barrier
    return out


def lnc2(x):
    return halves_kernel[2](x)
