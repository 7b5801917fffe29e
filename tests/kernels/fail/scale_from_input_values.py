# Normalising by the input's largest value, read into Python while the kernel is traced: the kernel
# sees shapes and dtypes only (compute the maximum with nl.max and divide on the engines).
#
# entry: normalise_kernel
# inputs: a=float32[128,256]
# expect-error: nkia_trace_time_value_read line 16
#
#
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def normalise_kernel(a):
    scale = 1.0 / float(abs(a.numpy()).max())  # Mistake: reads the input's values
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out
