"""NKI tensors as Python objects: indexing (``t[...]``: slices, index tiles, runtime row indices),
assignment (``t[...] = value``: a tile, a number, a legacy matmul landing in PSUM, a load whose
DMA writes the destination, an nl.loop_reduce step), ``+=`` (matmul accumulation), the arithmetic
and comparison operators (the nl functions of the same meaning), and the guards that stop Python from treating a tile as a
value it has only on the device: its truth (``if t:``, ``a and b``) and NumPy applied to it.

Importing this module installs all of that on the core's Tensor and View types (and the guards
on PendingMatmul); the dialect modules nki.language and neuronxcc.nki.language import it for that.
It builds on _nkia.lang (the operators are nl functions), which never imports it. No public name
here is an nl name; getitem, setitem, iadd and truth are what the core's types get.
"""
import ast
import builtins
import dis
import linecache
import sys

import numpy as np

import _nkia_core as core
from _nkia import lang
from _nkia.buffers import direct_kernel
from _nkia.dtypes import dtype
from _nkia.errors import NkiError
from _nkia.index import IndexTile, Mask, affine_key, free_slices
from _nkia.lang import binary
from _nkia.operands import IndexedRef, IndirectRows, LoopReduce, PendingLoad, PendingMatmul, is_tensor


def getitem(self, key):
    """``t[key]``: a view (slices and integers), a strided access (index tiles; one running past the
    tensor's end is an IndexedRef that a mask may cut back), or HBM rows chosen at run time by an
    index tile in the first position (IndirectRows)."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:  # integers and slices only (most keys): a view, nothing else to look for
        if type(k) is not slice and type(k) is not int:
            return _getitem_general(self, key, items)
    return _plain_view(self, key, items)


def _getitem_general(self, key, items):
    """getitem of a key holding more than integers and slices."""
    if any(isinstance(k, lang.LoopRange) for k in items):  # `a[ix, iy]` with ix = nl.affine_range(n): 0:n
        items = tuple(k.as_slice() if isinstance(k, lang.LoopRange) else k for k in items)
        key = items if isinstance(key, tuple) else items[0]
    runtime = [i for i, k in enumerate(items) if isinstance(k, (core.Tensor, core.View))]
    # A runtime row index may follow integer indices on leading (batch / block) dimensions: `t[b, idx, i_f]`
    # chooses rows of the [rows, ...] tensor t[b] (docs/nki-semantics.md "Runtime row indices").
    lead = runtime[0] if runtime else 0
    if len(runtime) > 1 or not builtins.all(isinstance(k, (int, np.integer)) for k in items[:lead]):
        raise NkiError("err_indirect_indices_free_dim", "a runtime index tile is used on a free dimension",
                       "use runtime indices only on the first (row) dimension, after integer indices of any "
                       "leading dimensions; gather within partitions with nl.gather_flattened")
    if runtime:
        if self.buffer not in ("shared_hbm", "private_hbm"):
            raise NkiError("err_copy_dynamic_indirect_indices_not_natively_supported",
                           f"a {self.buffer} tensor is indexed with a runtime index tile",
                           "index HBM tensors with runtime row indices (nl.load / nl.store)")
        base = self.view(tuple(items[:lead])) if lead else self
        return IndirectRows(base, items[lead], free_slices(items[lead + 1:]))
    if any(isinstance(k, IndexTile) for k in items):
        dims, shape = affine_key(key)
        try:
            return self.affine_view(dims, shape)
        except NkiError as e:
            if e.code != "err_tensor_access_out_of_bound":
                raise
            return IndexedRef(self, dims, shape)  # a mask may cut it back; checked when used
    return _plain_view(self, key, items)


def _plain_view(self, key, items):
    """The view of a key of integers, slices, None and Ellipsis."""
    try:
        view = self.view(key)
    except NkiError as e:
        ref = _slices_past_end(self, items) if e.code == "err_tensor_access_out_of_bound" else None
        if ref is None:
            raise
        return ref
    if view.ndim == 1 and self.ndim >= 2 and self.buffer in ("sbuf", "psum"):
        # `t[:, j]`, `t[0:N, 0]`, `t[0, :]`: an on-chip tile keeps a partition and a free axis, the
        # integer index leaving an axis of one (docs/nki-semantics.md "Rank-1 views").
        # The partition axis of a legacy block tensor, (blocks..., par_dim(P), F...), follows its blocks.
        par = _partition_axis(self) if Ellipsis not in items else 0
        n = view.shape[0]
        on_par = items[par] if par < len(items) else slice(None)
        return view.reshape((1, n) if isinstance(on_par, (int, np.integer)) else (n, 1))
    return view


def _partition_axis(t):
    """The partition axis of an on-chip tensor or view: after a legacy block tensor's blocks, also in
    a view that indexed some of them away (`acc[h]` of (heads, tiles, par_dim(P), F)); else 0."""
    base = getattr(t, "tensor", None)
    if base is None:
        return getattr(t, "blocks", 0)
    blocks = base.blocks
    par = blocks - (len(base.shape) - len(t.shape))
    return par if blocks and 0 <= par < len(t.shape) and t.shape[par] == base.shape[blocks] else 0


def _slices_past_end(t, items):
    """`t[a:b, ...]` with a slice running past t's end, as the access pattern the compiler makes of
    it: an IndexedRef that a mask may cut back within bounds (nothing is read or written outside the
    mask), refused (err_tensor_access_out_of_bound) when used without one that does. None for a key
    this does not cover (steps below 1, past-the-end integers, a rank-1 result)."""
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items = items[:i] + (slice(None),) * (len(t.shape) - len(items) + 1) + items[i + 1:]
    if len(items) > len(t.shape):
        return None
    dims, space = [], []
    for k, size in zip(items, t.shape):
        if isinstance(k, (int, np.integer)):
            if not 0 <= int(k) < size:
                return None
            dims.append((int(k), []))
            continue
        if not isinstance(k, slice) or k.step not in (None,) and int(k.step) < 1:
            return None
        start = 0 if k.start is None else int(k.start)
        stop = size if k.stop is None else int(k.stop)
        step = 1 if k.step is None else int(k.step)
        if start < 0 or stop < 0 or stop <= start:
            return None
        dims.append((start, [(len(space), step)] if step else []))
        space.append((stop - start + step - 1) // step)
    if len(space) + len(t.shape) - len(items) < 2:
        return None
    return IndexedRef(t, dims, space)


def setitem(self, key, value):
    """``t[key] = value``: writes a tile (copied on the Vector engine), a number (memset), a legacy
    matmul (issued straight into a PSUM destination), a load (its DMA straight into an SBUF
    destination of its shape: PendingLoad), or an nl.loop_reduce step."""
    dst = getitem(self, key)
    if isinstance(value, PendingMatmul) and not value.landed and dst.buffer != "psum" and direct_kernel():
        raise NkiError("nkia_direct_allocation_mixed",
                       f"a matmul result is assigned into a {dst.buffer} tile: the Tensor engine writes PSUM, so the "
                       f"compiler would allocate a PSUM tile in between, and this kernel places its on-chip tensors "
                       f"itself (direct allocation)",
                       "assign the matmul into a placed PSUM tile (ncc.psum.mod_alloc) and copy that into the SBUF "
                       "tile: res[...] = nl.copy(acc)")
    if isinstance(value, PendingLoad) and not value.landed:
        if value.lands_in(dst):
            value.land(dst)  # the DMA writes dst itself: no copy, no tile in between
            return
        value = value._nkia_tile
    box = getattr(value, "_nkia_box", None)
    if box is not None and tuple(dst.shape) == tuple(value.shape):
        m = Mask(None, value.shape)
        m.active, m.box = True, box
        dst, value = m(dst), m(value)
    if isinstance(value, LoopReduce):
        core.tensor_tensor(dst, dst, lang.spread(value.x, dst.shape), value.op)
    elif isinstance(value, PendingMatmul) and not value.landed and dst.buffer == "psum":
        value.issue(core.nc_matmul, dst, value.stationary, value.moving, "overwrite", value.perf_mode)
    elif is_tensor(value):
        core.assign(dst, value)
    elif isinstance(value, (int, float, builtins.bool, np.number)):
        core.memset(dst, float(value), "vector")
    else:
        raise NkiError("nkia_bad_operand", f"cannot assign a {type(value).__name__} to a tensor",
                       "assign a tile or a number")


def iadd(self, other):
    """``psum_tile += nl.matmul(...)``: the matmul accumulates into the tile (first write overwrites,
    later ones add); any other += adds in place on the Vector engine."""
    if isinstance(other, PendingMatmul) and not other.landed:
        other.issue(core.nc_matmul, self, other.stationary, other.moving, "auto", other.perf_mode)
    else:
        core.tensor_tensor(self, self, lang.spread(other, self.shape), "add") if is_tensor(other) else \
            core.tensor_scalar(self, self, "add", float(other), False)
    return self


def _in_while_condition(frame):
    """Whether the frame is evaluating the condition of a `while` statement (read from the kernel's
    source, which the runner keeps in linecache)."""
    lines = linecache.getlines(frame.f_code.co_filename)
    if not lines:
        return False
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        return False
    line = frame.f_lineno
    return builtins.any(isinstance(n, ast.While) and n.test.lineno <= line <= (n.test.end_lineno or n.test.lineno)
                        for n in ast.walk(tree))


def _legacy_frame(frame):
    """Whether the code running in `frame` is legacy-dialect code: its module imported neuronxcc."""
    return builtins.any(getattr(v, "__name__", "").partition(".")[0] == "neuronxcc" and type(v).__name__ == "module"
                        for v in frame.f_globals.values())


def truth(self):
    """A tile used where Python wants True or False. Its values exist only when the kernel runs,
    so the compiler refuses: `and` / `or` / `not` on tiles, or an if / while on tile values."""
    frame = sys._getframe(1)
    op = next((i.opname for i in dis.get_instructions(frame.f_code) if i.offset == frame.f_lasti), "")
    if op.startswith("POP_JUMP") and isinstance(self, core.Tensor) and not getattr(self, "_nkia_result", False) \
            and (self.kernel_argument or not _legacy_frame(frame)) and not _in_while_condition(frame):
        # The current dialect's `if t:` on a tensor the kernel was given or allocated (not a result it
        # computed) asks whether the optional tensor is there, as nki-library's kernels do
        # (`if params.expert_index:`): NKI's NkiTensor is a plain Python object, true when it exists.
        # In the legacy dialect the same holds for the kernel's arguments (the SDK's own
        # tensor_scalar_cumulative example: `nl.load(imm1[...]) if imm1 else None`).
        return True
    if _in_while_condition(frame):
        raise NkiError("err_while_loop_requires_unconditional_entry",
                       "a while loop's condition depends on a tile's values, so the loop may not run even once; "
                       "loops on runtime values exist only in do-while form (the first entry is unconditional)",
                       "run a fixed number of iterations (for i in nl.sequential_range(n)) and make the extra ones "
                       "harmless with nl.where, or restructure as a do-while loop whose condition is computed at the "
                       "end of the body")
    if op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "UNARY_NOT"):
        raise NkiError("err_ambiguous_tensor_truth_value",
                       "a tile is used with `and` / `or` / `not`, which need one truth value",
                       "use nl.logical_and / nl.logical_or / nl.logical_not (or & | ~) for elementwise logic, and "
                       "`is not None` to test optional arguments")
    raise NkiError("err_dynamic_control_flow_not_supported",
                   "Python control flow (if / while) depends on a tile's values, which are known only at run time",
                   "compute both outcomes and select per element (nl.where, nisa.tensor_copy_predicated), or "
                   "decide from shapes and constants")


def _host_math(what):
    """The error for the NumPy function `what` applied to a tile, naming the nl function of that name."""
    fn = what.rsplit(".", 1)[-1]
    instead = f"nl.{fn}" if fn in lang.__all__ else "the nl / nisa instruction that computes it"
    return NkiError("nkia_host_math_on_tile",
                    f"{what} is called on a tile: NumPy runs on the host while the kernel is traced, and a tile's "
                    f"values exist only on the device",
                    f"compute on tiles with {instead}; NumPy may only shape constants (sizes, scales) from "
                    f"shapes and arguments")


# NumPy ufuncs that a Python operator between a NumPy scalar and a tile reaches (np.float32(2) * t):
# the tile's own operator, as when the tile is on the left.
_OPERATOR_UFUNCS = {"add": "add", "subtract": "subtract", "multiply": "multiply", "true_divide": "divide",
                    "power": "power", "remainder": "mod", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
                    "bitwise_xor": "bitwise_xor", "left_shift": "left_shift", "right_shift": "right_shift",
                    "less": "less", "less_equal": "less_equal", "greater": "greater",
                    "greater_equal": "greater_equal"}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    op = _OPERATOR_UFUNCS.get(ufunc.__name__)
    if (op is not None and method == "__call__" and not kwargs and len(inputs) == 2
            and any(isinstance(x, np.generic) for x in inputs) and any(is_tensor(x) for x in inputs)):
        a, b = (float(x) if isinstance(x, np.floating) else int(x) if isinstance(x, np.integer) else x
                for x in inputs)
        return binary(op, a, b, None)
    name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    raise _host_math(name)


# NumPy functions that only look at a tile's shape, which is known while the kernel is traced.
_SHAPE_FUNCTIONS = {"shape": lambda t: tuple(t.shape), "ndim": lambda t: len(t.shape),
                    "size": lambda t: int(np.prod(t.shape, dtype=np.int64))}


def _array_function(self, func, types, args, kwargs):
    name = getattr(func, "__name__", "")
    if name in _SHAPE_FUNCTIONS and len(args) == 1 and not kwargs:
        return _SHAPE_FUNCTIONS[name](args[0])
    raise _host_math(f"numpy.{name}")


def _array(self, *args, **kwargs):
    raise _host_math("numpy.asarray / numpy.array")


def _install_host_math_guards(cls):
    """NumPy applied to a tile says so, at the kernel's line, instead of computing on an object
    array or failing on the tile's truth value later."""
    cls.__array_ufunc__ = _array_ufunc
    cls.__array_function__ = _array_function
    cls.__array__ = _array


def _install_operators():
    for cls in (core.Tensor, core.View, PendingMatmul, PendingLoad):
        _install_host_math_guards(cls)
    for cls in (core.Tensor, core.View):
        cls.__getitem__ = getitem
        cls.__setitem__ = setitem
        cls.__iadd__ = iadd
        for py_name, op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                            ("pow", "power"), ("mod", "mod"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                            ("xor", "bitwise_xor"), ("lshift", "left_shift"), ("rshift", "right_shift"),
                            ("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")):
            setattr(cls, f"__{py_name}__", (lambda o: lambda a, b: binary(o, a, b, None))(op))
            setattr(cls, f"__r{py_name}__", (lambda o: lambda a, b: binary(o, b, a, None))(op))
        cls.__bool__ = truth
        cls.__neg__ = lambda a: lang.negative(a)
        cls.__abs__ = lambda a: lang.abs(a)
        cls.dtype = property(lambda t: dtype(t.dtype_str))


_install_operators()
