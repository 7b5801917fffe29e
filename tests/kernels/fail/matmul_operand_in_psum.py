# Attention without the softmax: the transposed scores K Q^T come out of one matmul in PSUM and go
# straight into the next nisa.nc_matmul, whose operands the Tensor engine reads from SBUF only
# (copy the scores first). The legacy nl.matmul of a PSUM tile is legalised by the compiler with
# that copy; the instruction itself is not.
#
# entry: attention_kernel
# inputs: qT=float32[64,128] kT=float32[64,128] v=float32[128,64]
# expect-error: err_unsupported_memory line 28
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def attention_kernel(qT, kT, v):
    d, n = qT.shape
    out = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.shared_hbm)
    q = nl.ndarray((d, n), dtype=nl.float32, buffer=nl.sbuf)
    k = nl.ndarray((d, n), dtype=nl.float32, buffer=nl.sbuf)
    vt = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=q, src=qT)
    nisa.dma_copy(dst=k, src=kT)
    nisa.dma_copy(dst=vt, src=v)
    sT = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=sT, stationary=k, moving=q)  # [keys, queries], in PSUM
    o = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.psum)
    o_sb = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.nc_matmul(dst=o, stationary=sT, moving=vt)  # Mistake: sT is still in PSUM
    nisa.tensor_copy(dst=o_sb, src=o)
    nisa.dma_copy(dst=out, src=o_sb)
    return out
