# Storing a matmul result straight from PSUM to HBM: the DMA cannot read PSUM, the tile must be
# copied to SBUF first (nl.copy).
#
# entry: matmul_kernel
# inputs: lhsT=float32[128,128] rhs=float32[128,256]
# expect-error: err_unsupported_memory line 19
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def matmul_kernel(lhsT, rhs):
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT)
    b = nl.load(rhs)
    acc = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
    acc += nl.matmul(a, b, transpose_x=True)
    # Mistake: acc is in PSUM.
    nl.store(out, value=acc)
    return out
