# Returning the computed SBUF tile instead of storing it into a shared_hbm output: only HBM
# tensors can leave a kernel.
#
# entry: exp_kernel
# inputs: x=float32[128,256]
# expect-error: nkia_kernel_output_not_shared_hbm line 17
#
#
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def exp_kernel(x):
    t = nl.load(x)
    y = nl.exp(t)
    return y  # Mistake: y is an SBUF tile
