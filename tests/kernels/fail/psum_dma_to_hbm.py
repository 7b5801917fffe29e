# Moving a matmul result straight from PSUM to HBM with nisa.dma_copy: the DMA queues cannot read
# PSUM, so the tile must be copied to SBUF first (nisa.tensor_copy). (nl.store, the language-level
# wrapper, inserts that copy itself.)
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,256]
# expect-error: err_unsupported_memory line 23
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    # Mistake: acc is in PSUM.
    nisa.dma_copy(dst=out, src=acc)
    return out
