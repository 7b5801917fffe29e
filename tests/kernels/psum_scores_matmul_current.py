# Attention without the softmax: the transposed scores K Q^T come out of one nisa.nc_matmul in
# PSUM and are copied to SBUF before the next one, whose operands the Tensor engine reads from
# SBUF (the legacy twin leaves that copy to the compiler).
#
# entry: attention_kernel
# inputs: qT=float32[64,128] kT=float32[64,128] v=float32[128,64]
# reference:
#   return ((qT.T @ kT) @ v,)
# tolerance: atol=1e-3 rtol=1e-4
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
    sT_sb = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sT_sb, src=sT)
    o = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o, stationary=sT_sb, moving=vt)
    o_sb = nl.ndarray((n, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=o_sb, src=o)
    nisa.dma_copy(dst=out, src=o_sb)
    return out
