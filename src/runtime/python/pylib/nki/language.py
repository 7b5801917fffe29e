"""nki.language (current dialect), as simulated by nki-agent."""
from _nkia.lang import *  # noqa: F401,F403
from _nkia.lang import _CurrentParDim


def par_dim(n):
    """Block dimensions are gone from the current dialect: a partition dimension marked here must
    be the first one (a tensor with dimensions before it is refused when it is created)."""
    return _CurrentParDim(n)
