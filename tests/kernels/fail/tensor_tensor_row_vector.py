# Adding a [1, F] bias row to a [128, F] tile with nisa.tensor_tensor: the ISA instruction does
# not spread the row over the partitions (broadcast it to [128, F] first, or use nl.add).
#
# entry: bias_add_kernel
# inputs: x=float32[128,512] bias=float32[1,512]
# expect-error: err_num_partition_mismatch line 17
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def bias_add_kernel(x, bias):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    b = nl.load(bias)
    y = nisa.tensor_tensor(t, b, op=nl.add)  # Mistake: b spans one partition
    nl.store(out, value=y)
    return out
