# Attention without the softmax: the transposed scores K Q^T come out of one nl.matmul in PSUM and
# go straight into the next nl.matmul. The compiler legalises the PSUM operand by copying it to
# SBUF first (the nki-samples attention tutorial's attn_fwd_v1 relies on it); the simulator does
# the same.
#
# entry: attention_kernel
# inputs: qT=float32[64,128] kT=float32[64,128] v=float32[128,64]
# reference:
#   return ((qT.T @ kT) @ v,)
# tolerance: atol=1e-3 rtol=1e-4
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def attention_kernel(qT, kT, v):
    d, n = qT.shape
    out = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.shared_hbm)
    q = nl.load(qT)
    k = nl.load(kT)
    vt = nl.load(v)
    sT = nl.matmul(k, q, transpose_x=True)  # [keys, queries], in PSUM
    o = nl.copy(nl.matmul(sT, vt, transpose_x=True))
    nl.store(out, value=o)
    return out
