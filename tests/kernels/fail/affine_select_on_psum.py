# Applying the causal mask to attention scores that are still in PSUM: affine_select runs on the
# GpSimd engine, which cannot access PSUM (nl.copy the scores to SBUF first).
#
# entry: causal_scores_kernel
# inputs: qT=float32[64,128] kT=float32[64,128]
# expect-error: err_unsupported_memory line 21
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def causal_scores_kernel(qT, kT):
    d, n = qT.shape
    out = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ix = nl.arange(n)[:, None]
    iy = nl.arange(n)[None, :]
    s = nl.matmul(nl.load(qT), nl.load(kT), transpose_x=True)    # [queries, keys] in PSUM
    masked = nisa.affine_select(iy <= ix, s, -9984.0)  # Mistake: s is in PSUM
    nl.store(out, value=masked)
    return out
