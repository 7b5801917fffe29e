# Hack: reaches the sandbox's Python internals through introspection.
#
# task: int_scale
# expect: static_policy
import neuronxcc.nki as nki


@nki.jit
def kernel(x, k):
    builtins = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "catch_warnings"][0]
    return builtins
