# A linear recurrence h[t] = a[t] * h[t-1] + b[t] whose coefficients a and b both come out of
# matmuls and are scanned straight from PSUM: a Vector-engine instruction reads at most one of its
# inputs from PSUM (copy one of them to SBUF first).
#
# entry: scan_kernel
# inputs: wT=float32[128,128] xa=float32[128,256] xb=float32[128,256]
# expect-error: nkia_both_inputs_in_psum line 31
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scan_kernel(wT, xa, xb):
    K, M = wT.shape
    _, N = xa.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    w = nl.ndarray((K, M), dtype=nl.float32, buffer=nl.sbuf)
    a_in = nl.ndarray((K, N), dtype=nl.float32, buffer=nl.sbuf)
    b_in = nl.ndarray((K, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w, src=wT)
    nisa.dma_copy(dst=a_in, src=xa)
    nisa.dma_copy(dst=b_in, src=xb)

    a = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    b = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=a, stationary=w, moving=a_in)
    nisa.nc_matmul(dst=b, stationary=w, moving=b_in)

    h = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor_scan(dst=h, data0=a, data1=b, initial=0.0, op0=nl.multiply, op1=nl.add)  # Mistake
    nisa.dma_copy(dst=out, src=h)
    return out
