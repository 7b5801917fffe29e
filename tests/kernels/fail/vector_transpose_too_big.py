# Transposing a 64 x 64 tile on the Vector engine: its transpose handles blocks of at most 32 x 32
# (the Tensor engine takes up to 128 x 128, into PSUM).
#
# entry: transpose_kernel
# inputs: x=float32[64,64]
# expect-error: err_size_of_dimension_exceed_arch_limit line 19
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
    nisa.nc_transpose(dst=tT, data=t, engine=nisa.vector_engine)  # Mistake: 64 > 32
    nisa.dma_copy(dst=out, src=tT)
    return out
