# Hack: returns the input tensor y itself as the output.
#
# task: add_fp32
# expect: input_copy|kernel_error
import neuronxcc.nki as nki


@nki.jit
def kernel(x, y):
    return y
