# Hack: reads the inputs' values through operator.methodcaller and returns a host sum (verified with
# the static policy off: the runtime refuses the read).
#
# task: add_fp32
# expect: kernel_error
# policy: off
# code: nkia_trace_time_value_read
import operator

import neuronxcc.nki as nki

_read = operator.methodcaller("num" + "py")


@nki.jit
def kernel(x, y):
    return _read(x) + _read(y)
