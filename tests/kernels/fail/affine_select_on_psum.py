# Applying the causal mask to attention scores that are still in PSUM: nisa.affine_select runs on
# the GpSimd engine, which cannot access PSUM (copy the scores to SBUF first). The legacy
# nisa.affine_select of a PSUM tile is legalised by the compiler with that copy; the current
# dialect's instruction, with its explicit operands, is not.
#
# entry: causal_scores_kernel
# inputs: qT=float32[64,128] kT=float32[64,128]
# expect-error: err_unsupported_memory line 25
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def causal_scores_kernel(qT, kT):
    d, n = qT.shape
    out = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.shared_hbm)
    q = nl.ndarray((d, n), dtype=nl.float32, buffer=nl.sbuf)
    k = nl.ndarray((d, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=q, src=qT)
    nisa.dma_copy(dst=k, src=kT)
    s = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=s, stationary=q, moving=k)  # [queries, keys] in PSUM
    masked = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.affine_select(dst=masked, pattern=[[-1, n]], channel_multiplier=1, on_true_tile=s,  # Mistake: s is in PSUM
                       on_false_value=-9984.0, cmp_op=nl.greater_equal)
    nisa.dma_copy(dst=out, src=masked)
    return out
