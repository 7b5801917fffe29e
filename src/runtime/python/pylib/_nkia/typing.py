"""nki.typing / neuronxcc.nki.typing: annotations for kernel parameters.

``nt.tensor[shape, dtype]`` (or bare ``nt.tensor``) documents a tensor argument and
``nt.mutable_tensor`` one the kernel may write in place; ``nt.scalar`` a number. They change
nothing at run time: arguments arrive as HBM tensors either way.
"""


class _Annotation:
    def __init__(self, name):
        self._name = name

    def __getitem__(self, params):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __repr__(self):
        return f"nt.{self._name}"


tensor = _Annotation("tensor")
mutable_tensor = _Annotation("mutable_tensor")
scalar = _Annotation("scalar")
