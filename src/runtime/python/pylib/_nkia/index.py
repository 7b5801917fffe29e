"""The legacy dialect's indexing: index tiles (nl.arange, nl.mgrid and their affine arithmetic),
the predicates built by comparing them (affine_select's, and masks), ``mask=`` arguments resolved
into the box of an instruction's index space (Mask), nl.par_dim, and the lowering of a key of
index tiles into a strided access (affine_key).

nl.arange / nl.mgrid / nl.par_dim / IndexTile / Predicate are nl names (_nkia.lang re-exports
them). The internal API other front-end modules use: Mask (the isa modules and nl functions apply
it to their operands), ParDim / CurrentParDim (nl.ndarray's block dimensions), affine_key and
free_slices (tensor indexing in _nkia.tensor_ops). Imports only _nkia.operands (the tile kinds a
mask restricts) below it; it never issues an instruction.
"""
import builtins

import numpy as np

from _nkia.errors import NkiError
from _nkia.operands import IndexedRef, is_tensor


# ---- index tiles --------------------------------------------------------------------------------

class IndexTile:
    """An affine expression over iteration variables, each spanning one axis of the index space:
    ``nl.arange(128)[:, None]`` is variable v over axis 0 with 128 values. Indexing a tensor with
    index tiles selects the elements their expressions address, which is a strided access pattern
    whose axes are the variables'."""

    _next_var = 0

    def __init__(self, terms, const, vars_, shape):
        self.terms = terms    # var id -> coefficient
        self.const = const    # constant offset
        self.vars = vars_     # var id -> (axis, size), axis None while the tile is 1-D
        self.shape = shape

    @classmethod
    def arange(cls, start, stop=None, step=1):
        if stop is None:
            start, stop = 0, start
        for v in (start, stop, step):
            if not isinstance(v, (int, np.integer)):
                raise NkiError("nkia_bad_index", "nl.arange takes integer bounds", "pass Python ints")
        n = len(range(int(start), int(stop), int(step)))
        var = cls._next_var
        cls._next_var += 1
        return cls({var: int(step)}, int(start), {var: (None, n)}, (n,))

    def __getitem__(self, key):
        """Gives a 1-D index tile its axis: ``[:, None]`` (partition), ``[None, :]`` (free), and
        for 3-D index spaces ``[:, None, None]``, ``[None, :, None]``, ``[None, None, :]``."""
        hint = "write nl.arange(n)[:, None] for the partition axis and nl.arange(n)[None, :] for the free axis"
        if len(self.shape) != 1 or not isinstance(key, tuple) or len(key) < 2:
            raise NkiError("nkia_bad_index", "index tiles are reshaped with [:, None] or [None, :]", hint)
        slices = [i for i, k in enumerate(key) if isinstance(k, slice)]
        if len(slices) != 1 or not builtins.all(k is None or isinstance(k, slice) for k in key):
            raise NkiError("nkia_bad_index", "index tiles are reshaped with [:, None] or [None, :]", hint)
        (var, (_, n)), = self.vars.items()
        axis = slices[0]
        shape = tuple(n if i == axis else 1 for i in range(len(key)))
        return IndexTile(dict(self.terms), self.const, {var: (axis, n)}, shape)

    def _combine(self, other, sign):
        if isinstance(other, (int, np.integer)):
            return IndexTile(dict(self.terms), self.const + sign * int(other), dict(self.vars), self.shape)
        if isinstance(other, IndexTile):
            terms = dict(self.terms)
            for v, c in other.terms.items():
                terms[v] = terms.get(v, 0) + sign * c
            return IndexTile(terms, self.const + sign * other.const, {**self.vars, **other.vars},
                             tuple(np.broadcast_shapes(self.shape, other.shape)))
        return NotImplemented

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        neg = IndexTile({v: -c for v, c in self.terms.items()}, -self.const, dict(self.vars), self.shape)
        return neg._combine(other, 1)

    def __mul__(self, other):
        if not isinstance(other, (int, np.integer)):
            raise NkiError("err_unsupported_expression_in_mask" if isinstance(other, IndexTile) else "nkia_bad_index",
                           "index tiles can only be multiplied by integers (the index must stay affine)",
                           "scale by a Python int, e.g. 2 * ix")
        return IndexTile({v: c * int(other) for v, c in self.terms.items()}, self.const * int(other),
                         dict(self.vars), self.shape)

    __rmul__ = __mul__

    def __setitem__(self, key, value):
        raise NkiError("err_cannot_assign_to_index",
                       "an index tile (nl.arange / nl.mgrid expression) is assigned into; index expressions are "
                       "not data and cannot be written",
                       "build a new index expression instead (e.g. j = 2 * i.x), or materialise the values into a "
                       "tile with nisa.iota and write into that")

    def __floordiv__(self, other):
        return _NonAffineIndex("//")

    def __mod__(self, other):
        return _NonAffineIndex("%")

    def __truediv__(self, other):
        return _NonAffineIndex("/")

    __rfloordiv__ = __floordiv__
    __rmod__ = __mod__
    __rtruediv__ = __truediv__

    def _compare(self, other, op):
        return Predicate(self - other, op)

    def __lt__(self, other):
        return self._compare(other, "less")

    def __le__(self, other):
        return self._compare(other, "less_equal")

    def __gt__(self, other):
        return self._compare(other, "greater")

    def __ge__(self, other):
        return self._compare(other, "greater_equal")

    def __eq__(self, other):
        return self._compare(other, "equal")

    def __ne__(self, other):
        return self._compare(other, "not_equal")

    __hash__ = object.__hash__

    def affine(self):
        """(constant, [(axis, coefficient)]) over the index space of this tile's 2-D shape."""
        if len(self.shape) == 1:
            raise NkiError("err_1d_arange_not_supported", "a 1-D nl.arange is used as a tile expression",
                           "give the index tile its axis: nl.arange(n)[:, None] or nl.arange(n)[None, :]")
        per_axis = {}
        for v, c in self.terms.items():
            axis = self.vars[v][0]
            per_axis[axis] = per_axis.get(axis, 0) + c
        return self.const, [(a, c) for a, c in sorted(per_axis.items()) if c != 0]


class _NonAffineIndex:
    """An index tile divided or taken modulo (``jf % 2``): not an affine expression. Indexing with it
    is nkia_bad_index; a mask built from it is err_unsupported_expression_in_mask (reported where the
    mask is used, since only then is it known to be one)."""

    def __init__(self, op):
        self.op = op

    def _same(self, *args):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _same
    __floordiv__ = __mod__ = __truediv__ = __rfloordiv__ = __rmod__ = __rtruediv__ = _same

    def _compare(self, other):
        return _NonAffinePredicate(self.op)

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _compare
    __hash__ = object.__hash__

    def affine(self):
        raise NkiError("nkia_bad_index",
                       f"an index expression uses '{self.op}', so it is no longer affine",
                       "use separate index tiles for the quotient and remainder axes (view the tensor with one more "
                       "axis), or index with a stride, e.g. x[i_p, 2 * i_f]")

    def __bool__(self):
        raise NkiError("err_control_flow_condition_depending_on_arange",
                       "a condition depends on index tile values (nl.arange / nl.mgrid)",
                       "express per-element conditions with mask= or nisa.affine_select, not Python if/and/or")


class _NonAffinePredicate:
    """A comparison involving a non-affine index expression (``jf % 2 == 0``)."""

    def __init__(self, op):
        self.op = op
        self.expr = _NonAffineIndex(op)

    def _mask_error(self):
        return NkiError("err_unsupported_expression_in_mask",
                        f"the mask uses '{self.op}' on an index tile; a mask must be an affine range condition "
                        f"(comparisons of i * c + k with constants, combined with &)",
                        "index the selected elements directly instead (e.g. x[i_p, 2 * j] for the even columns), "
                        "or bound each axis with < / <= / > / >=")

    def __and__(self, other):
        raise self._mask_error()

    __rand__ = __and__

    def __bool__(self):
        raise NkiError("err_control_flow_condition_depending_on_arange",
                       "a condition depends on index tile values (nl.arange / nl.mgrid)",
                       "express per-element conditions with mask= or nisa.affine_select, not Python if/and/or")


# ---- predicates and masks -----------------------------------------------------------------------

class Predicate:
    """A comparison of an affine index expression with 0 (``iy < ix`` is ``iy - ix < 0``): the
    predicate of affine_select, evaluated per element by the engine."""

    def __init__(self, expr, op):
        self.expr, self.op = expr, op

    def __bool__(self):
        raise NkiError("err_control_flow_condition_depending_on_arange",
                       "a condition depends on index tile values (nl.arange / nl.mgrid)",
                       "express per-element conditions with mask= or nisa.affine_select, not Python if/and/or")

    def __and__(self, other):
        return _MaskAnd(_mask_terms(self) + _mask_terms(other))

    __rand__ = __and__


class _MaskAnd:
    """``(ip < n) & (jf < m)``: a mask that holds where every one of its predicates holds."""

    def __init__(self, preds):
        self.preds = preds

    def __and__(self, other):
        return _MaskAnd(self.preds + _mask_terms(other))

    __rand__ = __and__
    __bool__ = Predicate.__bool__


def _mask_terms(m):
    if isinstance(m, _NonAffinePredicate):
        raise m._mask_error()
    if isinstance(m, Predicate):
        return [m]
    if isinstance(m, _MaskAnd):
        return list(m.preds)
    if isinstance(m, (builtins.bool, np.bool_)):  # a condition on loop indices only: all or nothing
        return [builtins.bool(m)]
    raise NkiError("err_unsupported_expression_in_mask",
                   f"a mask must be a comparison of index tiles (nl.arange / nl.mgrid), got {type(m).__name__}",
                   "write conditions such as mask=(i * 128 + ip < n), combined with &")


_CMP = {"less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b, "greater": lambda a, b: a > b,
        "greater_equal": lambda a, b: a >= b, "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b}


def _positions_where(op, const, coef, n):
    """(first, last, count) of the positions x in range(n) where `const + coef * x <op> 0` holds
    (integers, coef != 0), in O(log n) evaluations of that same comparison: const + coef * x is
    monotonic in x, so an order comparison holds on a prefix or a suffix of the axis, found by
    bisection; ``==`` holds at one position at most, ``!=`` everywhere else. (0, -1, 0) when it
    holds nowhere."""
    if n <= 0:
        return 0, -1, 0

    cmp = _CMP[op]

    def holds(x):
        return builtins.bool(cmp(const + coef * x, 0))

    def first_change(start):  # the first x whose verdict differs from start's (n: none)
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if holds(mid) != start:
                hi = mid
            else:
                lo = mid + 1
        return lo

    if op in ("equal", "not_equal"):
        const, coef = builtins.int(const), builtins.int(coef)  # index expressions are integral
        root = -const // coef if const % coef == 0 else None
        hit = root is not None and 0 <= root < n
        if op == "equal":
            return (root, root, 1) if hit else (0, -1, 0)
        if not hit:
            return 0, n - 1, n
        if root == 0:
            return (1, n - 1, n - 1) if n > 1 else (0, -1, 0)
        if root == n - 1:
            return 0, n - 2, n - 1
        return 0, n - 1, n - 1  # a hole inside the axis: not contiguous
    start = holds(0)
    change = first_change(start)
    if start:
        return 0, change - 1, change
    return (change, n - 1, n - change) if change < n else (0, -1, 0)


class Mask:
    """A ``mask=`` argument resolved against an instruction's index space (the shape of its
    elementwise operands): the box of positions where every predicate holds. The instruction then
    runs on that box of each operand; positions outside it are neither read nor written, so an
    index tile may run past a tensor's end where the mask cuts it off (the ragged last tile).

    Each predicate must bound one axis (``i * 128 + ip < n``) or none; conditions that couple two
    axes (``iy < ix``) are what nisa.affine_select is for."""

    def __init__(self, mask, space):
        self.space = tuple(int(d) for d in space)
        self.box = [(0, n) for n in self.space]
        self.empty = False
        self.active = mask is not None
        if mask is None:
            return
        for pred in _mask_terms(mask):
            if isinstance(pred, builtins.bool):
                self.empty |= not pred
                continue
            const, terms = pred.expr.affine()
            cmp = _CMP[pred.op]
            if not terms:
                self.empty |= not cmp(const, 0)
                continue
            if len(terms) > 1:
                raise NkiError("err_unsupported_expression_in_mask",
                               "this mask couples two axes of the index space; a mask must bound each axis "
                               "on its own (e.g. ip < n, jf < m)",
                               "bound each axis separately, and use nisa.affine_select for triangular conditions")
            (axis, coef), = terms
            if axis is None or axis >= len(self.space):
                raise NkiError("err_unsupported_expression_in_mask",
                               f"the mask refers to axis {axis} of a {len(self.space)}-D instruction",
                               "build the mask from the index tiles that index the instruction's operands")
            first, last, count = _positions_where(pred.op, const, coef, self.space[axis])
            if count == 0:
                self.empty = True
                continue
            if last - first + 1 != count:
                raise NkiError("err_unsupported_expression_in_mask",
                               "the mask selects a non-contiguous set of positions on one axis",
                               "mask with < / <= / > / >= bounds")
            lo, hi = self.box[axis]
            self.box[axis] = (builtins.max(lo, first), builtins.min(hi, last + 1))
            self.empty |= self.box[axis][0] >= self.box[axis][1]

    def full(self):
        return builtins.all(b == (0, n) for b, n in zip(self.box, self.space))

    def mark(self, out):
        """Notes on a new result tile which part of it the masked instruction wrote, so that
        ``t[...] = <it>`` assigns only that part (the rest of t keeps its values, as when the
        compiler makes t the instruction's destination)."""
        if self.active and (self.empty or not self.full()) and tuple(out.shape) == self.space:
            # An empty mask (a condition that is false for the whole tile) wrote nothing.
            out._nkia_box = [(0, 0)] * len(self.space) if self.empty else list(self.box)
        return out

    def __call__(self, x, axes=None):
        """x restricted to the mask's box. `axes` maps x's axes to index-space axes (None: the
        same axis); an axis of x whose size differs from the space's (a [P, 1] operand that
        broadcasts) is left whole."""
        if not self.active or self.full():
            return x._nkia_tile if isinstance(x, IndexedRef) else x
        if isinstance(x, IndexedRef):
            return x.restrict(self.box)
        if not is_tensor(x):
            return x
        key = []
        for i, d in enumerate(x.shape):
            a = i if axes is None else axes[i]
            if a is not None and a < len(self.space) and d == self.space[a] and self.box[a] != (0, d):
                key.append(slice(*self.box[a]))
            else:
                key.append(slice(None))
        return x.view(tuple(key))


# ---- nl.par_dim, nl.arange, nl.mgrid ------------------------------------------------------------

class ParDim(int):
    """nl.par_dim(n): marks the partition dimension of a tensor with leading block dimensions."""


class CurrentParDim(ParDim):
    """nl.par_dim(n) of the current dialect (nki.language), which has no block dimensions."""


def par_dim(n):
    return ParDim(n)


def arange(*args):
    """An index tile of consecutive values (legacy indexing): use nl.arange(n)[:, None] for the
    partition axis and nl.arange(n)[None, :] for a free axis."""
    return IndexTile.arange(*args)


class _MGridResult(tuple):
    """The index tiles of nl.mgrid, one per axis, also by name: .p (the partition axis), then .x, .y
    and .z for the free axes (the SDK's double-row matmul test writes a_mgrid.p, a_mgrid.x, a_mgrid.y)."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


class _MGrid:
    """nl.mgrid[0:P, 0:F] (or with more slices): one index tile per axis of the index space."""

    def __getitem__(self, key):
        if not isinstance(key, tuple) or len(key) < 2 or not builtins.all(isinstance(k, slice) for k in key):
            raise NkiError("nkia_bad_index", "nl.mgrid takes two or more slices, e.g. nl.mgrid[0:128, 0:512]",
                           "write nl.mgrid[0:P, 0:F]")
        tiles = []
        for axis, k in enumerate(key):
            t = IndexTile.arange(k.start or 0, k.stop, k.step or 1)
            tiles.append(t[tuple(slice(None) if i == axis else None for i in range(len(key)))])
        return _MGridResult(tiles)


mgrid = _MGrid()


# ---- index tiles as tensor keys -----------------------------------------------------------------

def affine_key(key):
    """Lowers a key holding index tiles to (per tensor dimension: const, [(axis, coef)]), shape."""
    items = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, slice) or k is Ellipsis for k in items):
        raise NkiError("err_unsupported_mixing_basic_advanced_tensor_indexing",
                       "a tensor is indexed with both index tiles (nl.arange / nl.mgrid) and slices",
                       "index every dimension with index tiles (or integers), or every one with slices")
    shape = ()
    dims = []
    for k in items:
        if isinstance(k, IndexTile):
            if len(k.shape) == 1:
                raise NkiError("err_1d_arange_not_supported", "a tensor is indexed with a 1-D nl.arange",
                               "give the index tile its axis: nl.arange(n)[:, None] or nl.arange(n)[None, :]")
            try:
                shape = tuple(np.broadcast_shapes(shape, k.shape))
            except ValueError:
                raise NkiError("nkia_bad_index", f"index tiles of shapes {shape} and {k.shape} do not fit together",
                               "index each axis with ranges of one size") from None
            dims.append((k.const, [(k.vars[v][0], c) for v, c in k.terms.items() if c != 0]))
        elif isinstance(k, (int, np.integer)):
            dims.append((int(k), []))
        elif isinstance(k, _NonAffineIndex):
            k.affine()
        else:
            raise NkiError("nkia_bad_index", f"cannot index with a {type(k).__name__}",
                           "index with integers, slices or index tiles")
    return dims, list(shape)


def free_slices(items):
    """The free-axis part of an indirect key as slices: index tiles along one free axis become
    the strided slice they address."""
    out = []
    for k in items:
        if isinstance(k, IndexTile):
            const, terms = k.const, [(k.vars[v][0], c) for v, c in k.terms.items() if c != 0]
            if len(terms) != 1 or terms[0][0] == 0 or terms[0][1] <= 0:
                raise NkiError("err_indirect_indices_free_dim",
                               "with a runtime row index, the other dimensions take plain ranges",
                               "index the free dimensions with nl.arange(n)[None, :] or slices")
            (axis, coef), = terms
            n = k.vars[next(iter(k.terms))][1]
            out.append(slice(const, const + coef * (n - 1) + 1, coef))
        else:
            out.append(k)
    return out

