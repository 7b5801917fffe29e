"""nki.language (current dialect), as simulated by nki-agent: the nl API of _nkia.lang (its
``__all__``); importing it gives tensors their Python operators and indexing (_nkia.tensor_ops).
The _nkia modules are imported as ``_nkia`` so that ``from nki.language import *`` gives the nl
API and nothing else."""
import _nkia.index
import _nkia.tensor_ops  # noqa: F401 - installs the tensors' operators and indexing
from _nkia.lang import *  # noqa: F401,F403


def par_dim(n):
    """Block dimensions are gone from the current dialect: a partition dimension marked here must
    be the first one (a tensor with dimensions before it is refused when it is created)."""
    return _nkia.index.CurrentParDim(n)
