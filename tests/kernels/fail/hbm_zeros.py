# Creating the output in HBM with nl.zeros (to accumulate into it later): HBM tensors cannot carry
# an initial value; allocate with nl.ndarray and store values.
#
# entry: add_kernel
# inputs: a=float32[128,64]
# expect-error: err_hbm_tensor_with_init_value_not_supported line 13
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(a):
    out = nl.zeros(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)  # Mistake: an HBM tensor with an initial value
    nl.store(out, value=nl.add(nl.load(a), 1.0))
    return out
