"""neuronxcc.nki.language (legacy dialect), as simulated by nki-agent: the nl API of _nkia.lang
(its ``__all__``), with loops whose bodies have block scope; importing it gives tensors their
Python operators and indexing (_nkia.tensor_ops). The _nkia modules are imported as ``_nkia`` so
that ``from neuronxcc.nki.language import *`` gives the nl API and nothing else."""
import _nkia.lang
import _nkia.tensor_ops  # noqa: F401 - installs the tensors' operators and indexing
from _nkia.lang import *  # noqa: F401,F403


def affine_range(*args, **kwargs):
    """Independent iterations; the legacy tracer gives the loop body block scope."""
    return _nkia.lang.loop(range(*args), True, True)


def sequential_range(*args, **kwargs):
    """Iterations in order; the legacy tracer gives the loop body block scope."""
    return _nkia.lang.loop(range(*args), False, True)
