"""nki.typing / neuronxcc.nki.typing: annotations for kernel parameters and local tensors.

``nt.tensor[shape, dtype]`` (or bare ``nt.tensor``) documents a tensor argument and
``nt.mutable_tensor`` one the kernel may write in place; ``nt.scalar`` a number. On parameters they
change nothing at run time: arguments arrive as HBM tensors either way.

On a local variable, ``t: nt.tensor[128, 512] = expr`` is a check: the kernel loader rewrites the
assignment so that the value's shape is compared with the annotated one when the line runs
(err_annotation_shape_mismatch; see check_annotation). Other annotations stay inert.
"""
from _nkia.errors import NkiError


class _Annotation:
    def __init__(self, name):
        self._name = name

    def __getitem__(self, params):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __repr__(self):
        return f"nt.{self._name}"


class _TensorAnnotation(_Annotation):
    """nt.tensor: ``nt.tensor[128, 512]``, ``nt.tensor[(128, 512), nl.float32]`` or
    ``nt.tensor[[128, 512]]`` is a _TensorType holding the shape (None when it names none)."""

    def __getitem__(self, params):
        return _TensorType(_shape_of(params))


class _TensorType:
    def __init__(self, shape):
        self.shape = shape

    def __call__(self, *args, **kwargs):
        return self

    def __repr__(self):
        return f"nt.tensor[{', '.join(str(d) for d in self.shape)}]" if self.shape is not None else "nt.tensor"


def _is_dim(d):
    return isinstance(d, int) and not isinstance(d, bool)


def _shape_of(params):
    """The shape an nt.tensor subscript names: its leading integers, or a leading tuple / list of
    integers (a dtype may follow either); None when there is none."""
    items = params if isinstance(params, tuple) else (params,)
    if items and isinstance(items[0], (tuple, list)) and all(_is_dim(d) for d in items[0]):
        return tuple(int(d) for d in items[0])
    dims = []
    for d in items:
        if not _is_dim(d):
            break
        dims.append(int(d))
    return tuple(dims) if dims else None


tensor = _TensorAnnotation("tensor")
mutable_tensor = _Annotation("mutable_tensor")
scalar = _Annotation("scalar")


def check_annotation(value, annotation, target):
    """``target: annotation = value`` on a local variable, as rewritten by the kernel loader:
    `annotation` is a function that evaluates the annotation (lazily, as Python itself never does
    for locals). An nt.tensor[...] annotation with a shape must match the value's shape; any other
    annotation, or one that fails to evaluate, is ignored. Returns the value."""
    try:
        ann = annotation()
    except Exception:  # noqa: BLE001 - an annotation Python would never have evaluated
        return value
    if not isinstance(ann, _TensorType) or ann.shape is None:
        return value
    shape = getattr(value, "shape", None)
    if shape is None:
        return value
    try:
        got = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        return value
    if got != ann.shape:
        raise NkiError("err_annotation_shape_mismatch",
                       f"'{target}' is annotated {ann!r} but the value assigned to it has shape {list(got)}",
                       f"make the annotation state the real shape (nt.tensor[{', '.join(str(d) for d in got)}]), "
                       f"change the expression so that it produces {list(ann.shape)}, or drop the annotation")
    return value
