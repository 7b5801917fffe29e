# A running sum kept in the caller's tensor: the legacy dialect lets a kernel that returns its
# outputs write an input only when it is annotated nt.mutable_tensor (and returned).
#
# entry: accumulate_kernel
# inputs: acc=float32[128,64] x=float32[128,64]
# reference:
#   return (acc + x,)
# tolerance: atol=0 rtol=0
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt


@nki.jit
def accumulate_kernel(acc: nt.mutable_tensor, x):
    nl.store(acc, value=nl.add(nl.load(acc), nl.load(x)))
    return acc
