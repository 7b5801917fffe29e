"""What NKI calls accept where a tile goes, beside the instruction core's Tensor and View: a legacy
matmul that has not landed yet (PendingMatmul), a load assigned straight into part of a tile
(PendingLoad; assigned_target says when a load is), a tensor indexed past its end under a mask
(IndexedRef), HBM rows chosen at run time by an index tile (IndirectRows, IndirectAp) and one step
of a loop-carried reduction (LoopReduce); ``is_tensor`` says whether a value is any of them.

Each kind hands the core the tile it stands for through the ``_nkia_tile`` attribute (the core's
Python binding reads it), or refuses with the NKI code of the misuse. This module is the bottom of
the tile layer: it imports only the core, the error type, the dtypes and the buffers (a landing
load's new tile), so that _nkia.index, _nkia.lang and
_nkia.tensor_ops can all build on it. It never issues an instruction except the one a PendingMatmul
or a PendingLoad stands for.
"""
import ast
import builtins
import dis
import itertools
import linecache
import sys

import _nkia_core as core
from _nkia.buffers import new_tile
from _nkia.dtypes import dtype as nl_dtype
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


class PendingLoad:
    """The result of nl.load / nl.load_transpose2d in ``t[key] = nl.load(...)``, before it lands. The
    compiler folds the assignment's copy into the load, so the DMA writes t[key] itself: DMA
    destinations have none of the compute engines' start-partition rules, and no tile is made in
    between. ``_nkia.tensor_ops.setitem`` lands it there (``land(dst)``) when the destination can
    take the DMA as it is (``lands_in``); any other use lands it in a new SBUF tile first, as an
    eager load would have. The load returns one only for that statement (assigned_target), so it
    lands before any other instruction issues.

    `issue(t)` issues the DMA into the tile or view t of `shape` / `dtype` and returns what the load
    returns for t (t marked with its mask's box); `src_dtype` is the source's dtype name."""

    _nkia_box = None  # the marked box is the landed tile's (setitem asks before landing)

    def __init__(self, shape, dtype, src_dtype, issue):
        self.shape, self.dtype_str, self.src_dtype = tuple(int(d) for d in shape), dtype, src_dtype
        self._issue = issue
        self._loc = core.caller_location()
        self._tile = None
        self._landed = False

    buffer = "sbuf"

    @property
    def dtype(self):
        return nl_dtype(self.dtype_str)

    @property
    def landed(self):
        return self._landed

    def lands_in(self, dst):
        """Whether the DMA can write dst (the destination of the assignment) itself: an SBUF tile or
        view of the load's shape, of the load's dtype, or of another dtype the DMA converts the
        source to (nki-spec: dma_copy converts through FP32) when the load names no dtype of its
        own (else the values would be rounded twice)."""
        if self._landed or not isinstance(dst, (core.Tensor, core.View)) or dst.buffer != "sbuf":
            return False
        if tuple(int(d) for d in dst.shape) != self.shape:
            return False
        return dst.dtype_str == self.dtype_str or self.dtype_str == self.src_dtype

    def _run(self, t):
        try:
            return self._issue(t)
        except NkiError as e:
            if self._loc is not None:
                e.loc = self._loc
            raise

    def land(self, dst):
        """Issues the DMA into dst (lands_in(dst) holds); dst then holds the loaded values."""
        self._landed = True
        self._run(dst)
        self._tile = dst

    @property
    def _nkia_tile(self):
        if self._tile is None:
            self._landed = True
            self._tile = self._run(new_tile(self.shape, self.dtype_str, "sbuf"))
        return self._tile

    def __getattr__(self, name):
        return getattr(self._nkia_tile, name)

    def __getitem__(self, key):
        return self._nkia_tile[key]


_CALLS = ("CALL", "CALL_FUNCTION_EX")
_CACHE = dis.opmap["CACHE"]
# (code, offset of the call) -> the name of the tile a statement `name[key] = <that call>` assigns
# into, or None when the call is anything else.
_ASSIGNED = {}
_ASSIGNMENTS = {}  # file -> {(line, end line, column, end column) of a value: the target's name}


def _assignments(filename):
    lines = linecache.getlines(filename)
    found = _ASSIGNMENTS.get(filename)
    if found is not None and found[0] is lines:
        return found[1]
    table = {}
    try:
        tree = ast.parse("".join(lines)) if lines else None
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript)
                and isinstance(node.targets[0].value, ast.Name) and isinstance(node.value, ast.Call)):
            v = node.value
            table[(v.lineno, v.end_lineno, v.col_offset, v.end_col_offset)] = node.targets[0].value.id
    _ASSIGNMENTS[filename] = (lines, table)
    return table


def assigned_target(depth=2):
    """The tile that the kernel statement calling the running function (the NKI API `depth` frames
    up, called straight from a kernel's own file) assigns the call's result into, when that
    statement is ``name[key] = <the call>`` and name is a tile: the load's DMA can then write
    name[key] itself. None otherwise (the call is nested in another expression, bound to a name,
    made by the NKI modules themselves, ...)."""
    frame = sys._getframe(depth)
    code = frame.f_code
    if code.co_filename.startswith("<nki-agent>"):
        return None
    key = (code, frame.f_lasti)
    if key not in _ASSIGNED:
        name = None
        # The instruction running in that frame is the call: the last one at or before f_lasti, which
        # may point into the CACHE entries that follow it; its source span is its code unit's entry
        # of co_positions. Read straight from the code object: disassembling the whole function
        # costs milliseconds in every fresh kernel process.
        raw, at = code.co_code, frame.f_lasti
        while at > 0 and raw[at] == _CACHE:
            at -= 2
        if dis.opname[raw[at]] in _CALLS:
            p = next(itertools.islice(code.co_positions(), at // 2, None), None)
            if p is not None and None not in p:
                name = _assignments(code.co_filename).get(p)
        _ASSIGNED[key] = name
    name = _ASSIGNED[key]
    if name is None:
        return None
    if name in frame.f_locals:
        target = frame.f_locals[name]
    else:
        target = frame.f_globals.get(name, None)
    return target if isinstance(target, (core.Tensor, core.View)) else None


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


_TILE_KINDS = (core.Tensor, core.View, PendingMatmul, PendingLoad, IndexedRef, IndirectRows)


def is_tensor(x):
    """Whether x stands for a tile (or tensor) rather than a number or another Python value."""
    return isinstance(x, _TILE_KINDS)
