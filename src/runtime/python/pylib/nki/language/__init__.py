"""nki.language (current dialect), as simulated by nki-agent: the nl API of _nkia.lang (its
``__all__``); importing it gives tensors their Python operators and indexing (_nkia.tensor_ops).
The _nkia modules are imported as ``_nkia`` so that ``from nki.language import *`` gives the nl
API and nothing else."""
import _nkia.buffers
import _nkia.index
import _nkia.lang
import _nkia.tensor_ops  # noqa: F401 - installs the tensors' operators and indexing
import _nkia_core
from _nkia.lang import *  # noqa: F401,F403
from _nkia.registers import dynamic_range  # noqa: F401


def par_dim(n):
    """Block dimensions are gone from the current dialect: a partition dimension marked here must
    be the first one (a tensor with dimensions before it is refused when it is created)."""
    return _nkia.index.CurrentParDim(n)


def shared_identity_matrix(n, dtype=_nkia.lang.uint8, dst=None, **kwargs):
    """An n x n identity in SBUF, as the current dialect's API documents it ("Create an identity
    matrix in SBUF", with dst= the tile to fill): the HBM constant of the legacy dialect, copied by
    one DMA into a new SBUF tile (or into dst)."""
    n = int(n)
    src = _nkia.lang.shared_identity_matrix(n, dtype)
    tile = dst if dst is not None else _nkia.buffers.new_tile((n, n), dtype or _nkia.lang.uint8, _nkia.lang.sbuf)
    _nkia_core.dma_copy(tile, src)
    return tile
