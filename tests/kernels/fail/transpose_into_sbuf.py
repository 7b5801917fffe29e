# A 128 x 128 Tensor-engine transpose written straight into an SBUF tile: nc_transpose on the
# Tensor engine produces its result in PSUM (copy it to SBUF afterwards).
#
# entry: transpose_kernel
# inputs: x=float32[128,128]
# expect-error: err_unsupported_memory line 19
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose_kernel(x):
    P, F = x.shape
    out = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    tT = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=tT, data=t)  # Mistake: tT must be in PSUM
    nisa.dma_copy(dst=out, src=tT)
    return out
