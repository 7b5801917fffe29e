"""What NKI calls accept where a tile goes, beside the instruction core's Tensor and View: a legacy
matmul that has not landed yet (PendingMatmul), a tensor indexed past its end under a mask
(IndexedRef), HBM rows chosen at run time by an index tile (IndirectRows, IndirectAp) and one step
of a loop-carried reduction (LoopReduce); ``is_tensor`` says whether a value is any of them.

Each kind hands the core the tile it stands for through the ``_nkia_tile`` attribute (the core's
Python binding reads it), or refuses with the NKI code of the misuse. This module is the bottom of
the tile layer: it imports only the core and the error type, so that _nkia.index, _nkia.lang and
_nkia.tensor_ops can all build on it. It never issues an instruction except the one a PendingMatmul
stands for.
"""
import builtins

import _nkia_core as core
from _nkia.errors import NkiError


class PendingMatmul:
    """The result of a legacy matmul before it lands anywhere. ``psum_tile += <this>`` issues the
    matmul accumulating into psum_tile (a PE accumulation group); any other use writes it to a new
    PSUM tile first, as the compiler would."""

    def __init__(self, stationary, moving, perf_mode=""):
        # The operands' rules are checked at the call, and a rule the matmul breaks once it lands
        # (its PSUM result) is reported at the call too, not at the statement that consumes it.
        core.check_matmul_inputs(stationary, moving, perf_mode)
        self.stationary, self.moving, self.perf_mode = stationary, moving, perf_mode
        self._loc = core.caller_location()
        self._tile = None

    @property
    def landed(self):
        """Whether the matmul has been written to a PSUM tile of its own (by a use other than an
        assignment or ``+=`` into a PSUM tile)."""
        return self._tile is not None

    def issue(self, fn, *args):
        """Runs the core call that lands this matmul; its NkiError is located at the matmul's call."""
        try:
            return fn(*args)
        except NkiError as e:
            if getattr(e, "loc", None) is None and self._loc is not None:
                e.loc = self._loc
            raise

    @property
    def _nkia_tile(self):
        if self._tile is None:
            self._tile = self.issue(core.nc_matmul_new, self.stationary, self.moving, self.perf_mode)
        return self._tile

    def __getattr__(self, name):
        return getattr(self._nkia_tile, name)

    def __getitem__(self, key):
        return self._nkia_tile[key]


class _PartOf:
    """An operand standing for elements of the tensor `base`: it has base's dtype and buffer."""

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def buffer(self):
        return self.base.buffer


class IndexedRef(_PartOf):
    """A tensor indexed with index tiles whose range runs past the tensor's end: legal only under a
    mask that cuts the range back. Its bounds are checked when an instruction uses it — within the
    mask's box, or in full (err_tensor_access_out_of_bound) when there is no mask."""

    def __init__(self, base, dims, space):
        self.base, self.dims, self.space = base, dims, list(space)

    @property
    def shape(self):
        return tuple(self.space) + tuple(self.base.shape[len(self.dims):])

    def restrict(self, box):
        n = len(self.space)
        dims = [(c + builtins.sum(coef * box[a][0] for a, coef in terms), terms) for c, terms in self.dims]
        view = self.base.affine_view(dims, [hi - lo for lo, hi in box[:n]])
        rest = box[n:]
        return view.view(tuple([slice(None)] * n + [slice(lo, hi) for lo, hi in rest])) if rest else view

    @property
    def _nkia_tile(self):
        return self.base.affine_view(self.dims, self.space)


def skip_oob(oob_mode):
    """Whether an indirect DMA skips out-of-bounds rows (oob_mode=nisa.oob_mode.skip) instead of failing."""
    return oob_mode is not None and str(oob_mode) == "skip"


class IndirectRows(_PartOf):
    """``t[idx_tile, ...]``: the rows of an HBM tensor named at run time by an SBUF tile of row
    numbers (one per partition). nl.load gathers them, nl.store scatters into them."""

    def __init__(self, base, index, rest):
        self.base, self.index = base, index
        self.rows = base.view((slice(None),) + tuple(rest))  # axis 0 whole; the rest as indexed

    @property
    def shape(self):
        return (self.index.shape[0],) + tuple(self.rows.shape[1:])

    @property
    def _nkia_tile(self):
        raise NkiError("err_copy_dynamic_indirect_indices_not_natively_supported",
                       "a tensor indexed with a runtime index tile is used outside nl.load / nl.store",
                       "gather rows with nl.load(t[idx, ...]) and scatter with nl.store(t[idx, ...], value=...)")


class IndirectAp(IndirectRows):
    """``t.ap(pattern=[[row, P], ...], vector_offset=idx, indirect_dim=0)``: partition p of the
    access is row idx[p] of the HBM tensor t (the rows as the C++ core built them). nisa.dma_copy
    gathers from it and scatters into it."""

    def __init__(self, rows, index, shape):
        self.base, self.index, self.rows = rows.tensor, index, rows
        self._shape = tuple(shape)

    @property
    def shape(self):
        return self._shape

    @property
    def _nkia_tile(self):
        raise NkiError("nkia_bad_operand",
                       "an access with vector_offset is used outside nisa.dma_copy: only dma_copy gathers and "
                       "scatters rows chosen at run time in nki-agent",
                       "gather the rows into an SBUF tile with nisa.dma_copy first, then use the tile")


class LoopReduce:
    """nl.loop_reduce(x, op, loop_indices): one step of a reduction carried across loop
    iterations. Assigned to a tensor (``acc[...] = nl.loop_reduce(x, np.add, [i])``) it combines
    x into that tensor: acc = op(acc, x)."""

    def __init__(self, x, op):
        self.x, self.op = x, op

    @property
    def _nkia_tile(self):
        return self.x._nkia_tile if hasattr(self.x, "_nkia_tile") else self.x

    @property
    def shape(self):
        return self.x.shape

    @property
    def dtype(self):
        return self.x.dtype


_TILE_KINDS = (core.Tensor, core.View, PendingMatmul, IndexedRef, IndirectRows)


def is_tensor(x):
    """Whether x stands for a tile (or tensor) rather than a number or another Python value."""
    return isinstance(x, _TILE_KINDS)
