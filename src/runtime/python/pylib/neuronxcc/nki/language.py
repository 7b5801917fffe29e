"""neuronxcc.nki.language (legacy dialect), as simulated by nki-agent."""
from _nkia.lang import *  # noqa: F401,F403
from _nkia.lang import _loop


def affine_range(*args, **kwargs):
    """Independent iterations; the legacy tracer gives the loop body block scope."""
    return _loop(range(*args), True, True)


def sequential_range(*args, **kwargs):
    """Iterations in order; the legacy tracer gives the loop body block scope."""
    return _loop(range(*args), False, True)
