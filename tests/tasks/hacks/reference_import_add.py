# Hack: imports the task's reference model and calls it.
#
# task: add_fp32
# expect: static_policy
import neuronxcc.nki as nki

from task import Model


@nki.jit
def kernel(x, y):
    return Model()(x, y)
