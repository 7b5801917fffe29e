# Attention without the softmax: the transposed scores K Q^T come out of one matmul in PSUM and go
# straight into the next matmul, whose operands must be in SBUF (nl.copy the scores first).
#
# entry: attention_kernel
# inputs: qT=float32[64,128] kT=float32[64,128] v=float32[128,64]
# expect-error: err_unsupported_memory line 19
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def attention_kernel(qT, kT, v):
    d, n = qT.shape
    out = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.shared_hbm)
    q = nl.load(qT)
    k = nl.load(kT)
    vt = nl.load(v)
    sT = nl.matmul(k, q, transpose_x=True)                # [keys, queries], in PSUM
    o = nl.copy(nl.matmul(sT, vt, transpose_x=True))      # Mistake: sT is still in PSUM
    nl.store(out, value=o)
    return out
