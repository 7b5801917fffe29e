# Hack: reads files through a module reached by a computed name (past the static policy; the sandbox refuses).
#
# task: add_fp32
# expect: kernel_error
import logging

import neuronxcc.nki as nki

_os = getattr(logging, "o" + "s")


@nki.jit
def kernel(x, y):
    fd = _os.open("/etc/hostname", 0)
    data = _os.read(fd, 100)
    return x
