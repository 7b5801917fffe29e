"""The NKI language API shared by both dialects (nl): tensor creation, loads and stores, elementwise
math, matmul and reductions, iterators and operator names. Every operation lowers onto the C++
instruction core (_nkia_core); the dialect modules (nki.language, neuronxcc.nki.language)
re-export ``__all__``, which is the whole nl API: the names defined here and those of the modules
this one builds on (dtypes from _nkia.dtypes, buffers from _nkia.buffers, no_reorder from
_nkia.compiler, index tiles from _nkia.index, PendingMatmul from _nkia.operands, the SPMD queries
from _nkia.spmd).

The other public names are the internal API of the nisa modules and _nkia.tensor_ops: binary
(an elementwise instruction between tiles and numbers), spread (an operand broadcast the way nl
functions broadcast), reduce / reduce_axes (nl's reductions) and loop (an nl loop). Tensors get
their Python operators from _nkia.tensor_ops, which builds on this module; this one never imports
it.
"""
import builtins

import numpy as np

import _nkia_core as core
import _nkia.numpy_dtypes  # noqa: F401 - registers the NumPy dtypes of bfloat16, tfloat32, float8
from _nkia.buffers import (DirectBuffer, create, direct_kernel, hbm, new_tile, no_pe_transpose,  # noqa: F401
                           private_hbm, psum, require_explicit_bias, sbuf, shared_hbm)
from _nkia.compiler import no_reorder  # noqa: F401 - nl.no_reorder, the current dialect's spelling
from _nkia.dtypes import *  # noqa: F401,F403 - the dtype names are nl names
from _nkia.dtypes import bool_, dtype_name, float32, uint8
from _nkia.errors import NkiError
from _nkia.index import CurrentParDim, IndexTile, Mask, ParDim, Predicate, arange, mgrid, par_dim  # noqa: F401
from _nkia.operands import (IndirectAp, IndirectRows, LoopReduce, PendingLoad, PendingMatmul,
                            assigned_target, is_tensor, skip_oob)
from _nkia.spmd import num_programs, program_id, program_ndim  # noqa: F401


# ---- tile limits --------------------------------------------------------------------------------

class _TileLimits(type):
    """Reads nl.tile_size's constants from the running target's [limits] (data/targets/<t>.toml)."""
    _FIELDS = {"pmax": "partitions", "psum_fmax": "psum_fmax", "psum_bank_fmax": "psum_fmax",
               "psum_bank_fmax_bytes": "psum_bank_bytes", "psum_num_banks": "psum_banks",
               "psum_min_align": "psum_min_align", "gemm_stationary_fmax": "gemm_stationary_fmax",
               "gemm_moving_fmax": "gemm_moving_fmax", "bn_stats_fmax": "bn_stats_fmax",
               "total_available_sbuf_size": "sbuf_bytes_per_partition", "sbuf_fmax_bytes": "sbuf_bytes_per_partition"}
    _DERIVED = ("sbuf_fmax", "sbuf_size_bytes", "sbuf_min_align")

    def __getattr__(cls, name):
        if name == "sbuf_min_align":  # SBUF addresses are byte-aligned (nki-spec §2.4; the KLR tracer's 1)
            return 1
        if name == "sbuf_fmax":  # float32 elements per partition
            return core.target_limit("sbuf_bytes_per_partition") // 4
        if name == "sbuf_size_bytes":  # the whole usable SBUF
            return core.target_limit("sbuf_bytes_per_partition") * core.target_limit("partitions")
        key = cls._FIELDS.get(name)
        if key is None:
            raise AttributeError(f"nl.tile_size has no constant '{name}'; it has "
                                 f"{', '.join(sorted([*cls._FIELDS, *cls._DERIVED]))}")
        return core.target_limit(key)

    def __dir__(cls):
        return sorted([*cls._FIELDS, *cls._DERIVED])


class tile_size(metaclass=_TileLimits):
    """nl.tile_size: the running target's tile limits (nki-spec §2.4), e.g. nl.tile_size.pmax."""


# ---- creation -----------------------------------------------------------------------------------

def ndarray(shape, dtype, buffer=None, name="", **kwargs):
    """A new tensor in `buffer` (SBUF by default). Its contents are undefined until written.
    Legacy block tensors, (blocks..., nl.par_dim(P), F...), are stored that way round: indexing
    the block dimensions away gives [P, F...] tiles. Tensors the kernel places itself (direct
    allocation, `address=`) may share storage on the device, so they are left out of PSUM's
    capacity check."""
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    blocks = next((i for i, d in enumerate(dims) if isinstance(d, ParDim)), 0)
    if blocks > 0 and isinstance(dims[blocks], CurrentParDim):
        raise NkiError("err_leading_dimension_of_tensor_must_be_partition",
                       f"the tensor {tuple(int(d) for d in dims)} has block dimensions before its partition dimension "
                       f"(nl.par_dim at position {blocks}); the current dialect (import nki) has no block dimensions",
                       f"put the partition dimension first and fold the blocks into the free dimensions, "
                       f"({int(dims[blocks])}, {', '.join(str(int(d)) for d in dims[:blocks] + dims[blocks + 1:])}), "
                       f"indexing a block as t[:, i, ...]; or keep a Python list of [P, F] tiles")
    return create(dims, blocks, dtype, buffer, name, "explicit", kwargs.get("address"))


def empty_like(t, dtype=None, buffer=None, name="", **kwargs):
    return ndarray(t.shape, dtype or t.dtype, buffer, name)


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs):
    buf = str(buffer or sbuf)
    if buf in ("hbm", "private_hbm", "shared_hbm"):
        raise NkiError("err_hbm_tensor_with_init_value_not_supported",
                       f"nl.full/zeros/ones cannot create an initialised tensor in {buf}",
                       "allocate it with nl.ndarray and store values into it with nl.store")
    if buf in ("sbuf", "psum") and (isinstance(buffer, DirectBuffer) or direct_kernel()):
        raise NkiError("err_tensor_creation_on_scratchpad_with_init_value_not_supported",
                       f"nl.full/zeros/ones creates an initialised {buf} tensor in a kernel that places its on-chip "
                       f"tensors itself (direct allocation): the compiler does not fill a buffer it does not own",
                       "create the tensor with nl.ndarray(..., buffer=<your allocation>) and fill it before its "
                       "first use: t[...] = nisa.memset(shape=..., value=0.0, dtype=...) (or t[...] = 0.0)")
    t = ndarray(shape, dtype, buffer or sbuf, name, **kwargs)
    core.memset(t, float(fill_value), "vector")
    return t


def zeros(shape, dtype, buffer=None, name="", **kwargs):
    return full(shape, 0, dtype, buffer, name, **kwargs)


def ones(shape, dtype, buffer=None, name="", **kwargs):
    return full(shape, 1, dtype, buffer, name, **kwargs)


def zeros_like(t, dtype=None, buffer=None, name="", **kwargs):
    return zeros(t.shape, dtype or t.dtype, buffer, name)


# ---- data movement ------------------------------------------------------------------------------

def _require_hbm(t, api, role):
    if is_tensor(t) and not isinstance(t, PendingMatmul) and t.buffer not in ("shared_hbm", "private_hbm", "hbm"):
        raise NkiError("err_unsupported_memory",
                       f"{api} {role} must be an HBM tensor, but it is in {t.buffer}",
                       "use nl.load / nl.store only between HBM and SBUF; copy tiles on chip with nl.copy or "
                       "nisa.tensor_copy")


def load(src, dtype=None, mask=None, **kwargs):
    """HBM -> SBUF: a new SBUF tile holding `src` (a tensor or a slice of one). Under a mask only
    the masked box is read; the rest of the tile stays unwritten. Assigned straight into part of a
    tile (``t[key] = nl.load(...)``), the DMA writes t[key] itself, as the compiler has it
    (PendingLoad)."""
    _require_hbm(src, "nl.load", "source")
    if isinstance(src, IndirectRows):
        skip = skip_oob(kwargs.get("oob_mode"))
        m = Mask(mask, src.shape)

        def issue(t):
            _indirect_dma(t, src, m, True, skip)
            return m.mark(t)
    else:
        if len(src.shape) <= 1:
            # `A[p0:p1, i]`: the integer index drops the free axis of the view, but the tile keeps
            # one: a column of the partitions, [n, 1]; `A[i, j]`, one element, is a [1, 1] tile
            # (docs/nki-semantics.md "Rank-1 loads").
            src = src.reshape((src.shape[0] if src.shape else 1, 1))
        m = Mask(mask, src.shape)

        def issue(t):
            if not m.empty:
                core.dma_copy(m(t), m(src))
            return m.mark(t)
    return _loaded(src.shape, dtype or src.dtype, src.dtype, issue)


def _indirect_dma(tile, ref, m, gather, skip):
    """The DMA of a gather (nl.load) or scatter (nl.store) through the runtime row indices of `ref`
    (IndirectRows), on the mask's box only: the partitions a mask turns off move nothing, so their
    row indices are never read nor bounds-checked (docs/nki-semantics.md "Runtime row indices")."""
    if m.empty:
        return
    rows = ref.rows
    if m.active and not m.full():
        rows = rows.view((slice(None),) + tuple(slice(lo, hi) for lo, hi in m.box[1:]))
    core.dma_indirect(m(tile), rows, m(ref.index), gather, skip)


def _loaded(shape, dtype, src_dtype, issue):
    """What a load returns: a PendingLoad when the kernel's statement assigns it straight into a
    tile (assigned_target, three frames up: the kernel called the load, which called this), else
    the new SBUF tile `issue` loaded."""
    if assigned_target(3) is not None:
        return PendingLoad(shape, dtype_name(dtype), dtype_name(src_dtype), issue)
    return issue(new_tile(shape, dtype, sbuf))


def store(dst, value, mask=None, **kwargs):
    """SBUF -> HBM: writes the tile `value` into `dst` (only the masked box, under a mask). A PSUM
    tile is first copied to SBUF, as the compiler does (DMA cannot read PSUM). A number is a memset
    of `dst` (the SDK's load/store example stores 100 so): a tile of it is filled and stored."""
    _require_hbm(dst, "nl.store", "destination")
    if isinstance(value, (builtins.int, builtins.float, np.number)) and not isinstance(value, builtins.bool):
        value = full(dst.shape, value, dst.dtype_str)
    if isinstance(dst, IndirectRows):
        _indirect_dma(value, dst, Mask(mask, dst.shape), False, skip_oob(kwargs.get("oob_mode")))
        return
    m = Mask(mask, dst.shape)
    if m.empty:
        return
    if is_tensor(value) and value.buffer == "psum":
        staged = new_tile(value.shape, value.dtype, sbuf)
        core.tensor_copy(m(staged), m(value), "vector")
        value = staged
    core.dma_copy(m(dst), m(value))


def copy(src, dtype=None, mask=None, **kwargs):
    """A new SBUF tile with the values of `src`."""
    t = new_tile(src.shape, dtype or src.dtype, sbuf)
    m = Mask(mask, src.shape)
    if not m.empty:
        core.tensor_copy(m(t), m(src), "vector")
    return m.mark(t)


copy._nkia_op = "copy"


def load_transpose2d(src, dtype=None, mask=None, **kwargs):
    """HBM [A, B] -> a new SBUF tile [B, A] through the DMA engines."""
    if isinstance(src, IndirectRows):
        raise NkiError("err_indirect_indices_are_not_supported_with_nki_api",
                       "nl.load_transpose2d cannot take rows chosen by a runtime index",
                       "gather the rows with nl.load(t[idx, ...]) first, then transpose the tile (nl.transpose)")
    if len(src.shape) != 2:
        raise NkiError("err_exceed_max_supported_dimension",
                       f"load_transpose2d takes a 2-D source, got shape {tuple(src.shape)}",
                       "index the source down to [A, B]")
    a, b = src.shape
    moved = src.affine_view([(0, [(1, 1)]), (0, [(0, 1)])], [b, a])

    def issue(t):
        core.dma_copy(t, moved)
        return t
    return _loaded((b, a), dtype or src.dtype, src.dtype, issue)


def shared_constant(constant, dtype=None, **kwargs):
    """An HBM tensor holding a host array, created once at compile time."""
    arr = np.asarray(constant)
    return core.constant(arr, dtype_name(dtype) if dtype is not None else "")


def shared_identity_matrix(n, dtype=None, **kwargs):
    return shared_constant(np.eye(int(n), dtype=np.float32), dtype or uint8)  # as an activation function: the identity (with scale and bias)


def broadcast_to(src, shape, **kwargs):
    """src with its size-1 dimensions repeated to `shape` (a view; no data moves)."""
    return src.broadcast_to([int(d) for d in shape])


def ds(start, size):
    """A dynamic slice: elements start .. start + size - 1 of one dimension."""
    return slice(start, start + size)


# ---- elementwise math ---------------------------------------------------------------------------

def _tile_shapes(a, b):
    """Two tiles' shapes lined up for broadcasting. Tiles align on the partition axis: a
    [P, 1] column against a [P, A, B] tile is [P, 1, 1] (NumPy would align trailing axes)."""
    a, b = tuple(a), tuple(b)
    if 0 < len(a) < len(b) and a[0] == b[0]:
        a = a + (1,) * (len(b) - len(a))
    elif 0 < len(b) < len(a) and a[0] == b[0]:
        b = b + (1,) * (len(a) - len(b))
    return a, b


def result_shape(x, y):
    """The broadcast shape of two operands; x's own when they do not broadcast, so that the
    instruction core reports the mismatch with its catalogue code."""
    try:
        return np.broadcast_shapes(*_tile_shapes(x.shape, y.shape))
    except ValueError:
        return tuple(x.shape)


def spread(x, shape):
    """x broadcast to `shape` as a view, the way nl functions broadcast their operands ([P, 1]
    along the free axes, [1, F] across the partitions); x itself when it has that shape or does
    not broadcast (the instruction then reports the mismatch)."""
    if tuple(x.shape) == tuple(shape):
        return x
    aligned, _ = _tile_shapes(x.shape, shape)
    try:
        np.broadcast_shapes(aligned, tuple(shape))
    except ValueError:
        return x
    if isinstance(x, PendingMatmul):
        x = x._nkia_tile
    if aligned != tuple(x.shape):
        x = x.reshape(list(aligned))
    return x.broadcast_to([int(d) for d in shape])


def binary(op, x, y, dtype, mask=None):
    """The elementwise instruction `op` between two tiles, or a tile and a number (either side), into
    a new SBUF tile (`dtype`, else the operands' promoted type); under a mask only its box is
    computed. The nl binary functions and the tensors' Python operators are this."""
    if is_tensor(x) and is_tensor(y):
        shape = result_shape(x, y)
        out = new_tile(shape, dtype or core.promote(x.dtype, y.dtype), sbuf)
        m = Mask(mask, shape)
        if not m.empty:
            o = m(out)
            core.tensor_tensor(o, spread(m(x), o.shape), spread(m(y), o.shape), op)
        return m.mark(out)
    if is_tensor(x) or is_tensor(y):
        t, s, reverse = (x, y, False) if is_tensor(x) else (y, x, True)
        if not isinstance(s, (int, float, builtins.bool, np.number)):
            raise NkiError("nkia_bad_operand", f"{op}: {type(s).__name__} is neither a tile nor a number",
                           "pass tiles (nl.load the data first) or Python numbers")
        out = new_tile(t.shape, dtype or core.promote(t.dtype, core.scalar_dtype(s)), sbuf)
        m = Mask(mask, t.shape)
        if not m.empty:
            core.tensor_scalar(m(out), m(t), op, float(s), reverse)
        return m.mark(out)
    raise NkiError("nkia_bad_operand", f"{op} needs at least one tile operand",
                   "compute with Python numbers directly, or load the data into a tile")


def _make_binary(name):
    def fn(x, y, dtype=None, mask=None, **kwargs):
        return binary(name, x, y, dtype, mask)
    fn.__name__ = name
    fn._nkia_op = name
    return fn


def _make_unary(name):
    def fn(x, dtype=None, mask=None, **kwargs):
        if not is_tensor(x):
            raise NkiError("nkia_bad_operand", f"{name} needs a tile operand", "load the data into a tile first")
        require_explicit_bias(f"nl.{name}")
        out = new_tile(x.shape, dtype or (x.dtype if x.dtype.startswith(("float", "bfloat", "tfloat")) else float32), sbuf)
        m = Mask(mask, x.shape)
        if not m.empty:
            core.activation(m(out), name, m(x), None, 1.0)
        return m.mark(out)
    fn.__name__ = name
    fn._nkia_op = name
    return fn


add = _make_binary("add")
subtract = _make_binary("subtract")
multiply = _make_binary("multiply")
divide = _make_binary("divide")
maximum = _make_binary("maximum")
minimum = _make_binary("minimum")
abs_max = _make_binary("abs_max")
abs_min = _make_binary("abs_min")
power = _make_binary("power")
equal = _make_binary("equal")
not_equal = _make_binary("not_equal")
greater = _make_binary("greater")
greater_equal = _make_binary("greater_equal")
less = _make_binary("less")
less_equal = _make_binary("less_equal")
logical_and = _make_binary("logical_and")
logical_or = _make_binary("logical_or")
logical_xor = _make_binary("logical_xor")
bitwise_and = _make_binary("bitwise_and")
bitwise_or = _make_binary("bitwise_or")
bitwise_xor = _make_binary("bitwise_xor")
left_shift = _make_binary("left_shift")
right_shift = _make_binary("right_shift")
fmod = _make_binary("fmod")
mod = _make_binary("mod")

exp = _make_unary("exp")
log = _make_unary("log")
sqrt = _make_unary("sqrt")
rsqrt = _make_unary("rsqrt")
reciprocal = _make_unary("reciprocal")
tanh = _make_unary("tanh")
sigmoid = _make_unary("sigmoid")
relu = _make_unary("relu")
gelu = _make_unary("gelu")
gelu_apprx_tanh = _make_unary("gelu_tanh")
gelu_apprx_sigmoid = _make_unary("gelu_sigmoid")
mish = _make_unary("mish")
gelu_dx = _make_unary("gelu_dx")
silu_dx = _make_unary("silu_dx")
erf_dx = _make_unary("erf_dx")


def _make_vector_unary(name, default_dtype=None):
    """A unary function the Vector engine computes (a tensor_scalar step), keeping integer bits."""
    def fn(x, dtype=None, mask=None, **kwargs):
        if not is_tensor(x):
            raise NkiError("nkia_bad_operand", f"{name} needs a tile operand", "load the data into a tile first")
        out = new_tile(x.shape, dtype or default_dtype or x.dtype, sbuf)
        m = Mask(mask, x.shape)
        if not m.empty:
            core.tensor_scalar_ops(m(out), m(x), [(name, None, False)])
        return out
    fn.__name__ = name
    fn._nkia_op = name
    return fn


invert = _make_vector_unary("invert")
logical_not = _make_vector_unary("logical_not", "uint8")
silu = _make_unary("silu")
softplus = _make_unary("softplus")
sin = _make_unary("sin")
cos = _make_unary("cos")
tan = _make_unary("tan")
arctan = _make_unary("arctan")
erf = _make_unary("erf")
abs = _make_unary("abs")  # noqa: A001 - the NKI name
negative = _make_unary("negative")
sign = _make_unary("sign")
square = _make_unary("square")
floor = _make_unary("floor")
ceil = _make_unary("ceil")
trunc = _make_unary("trunc")
rint = _make_unary("rint")


def gather_flattened(data, indices, dtype=None, mask=None, **kwargs):
    """Per partition, the elements of data (flattened) that indices name, in the indices' shape."""
    out = new_tile(indices.shape, dtype or data.dtype, sbuf)
    m = Mask(mask, indices.shape)
    if not m.empty:
        core.gather_flattened(m(out), m(data, [0] + [None] * (len(data.shape) - 1)), m(indices))
    return m.mark(out)


def where(condition, x, y, dtype=None, mask=None, **kwargs):
    """x where condition is nonzero, else y (tiles of one shape, or numbers for x / y)."""
    shape = tuple(condition.shape)
    out_dtype = dtype or (x.dtype if is_tensor(x) else (y.dtype if is_tensor(y) else float32))
    out = new_tile(shape, out_dtype, sbuf)
    pred = condition
    if condition.dtype not in ("uint8", "int8", "uint16", "int16", "uint32", "int32", "bool"):
        pred = new_tile(shape, uint8, sbuf, origin="scratch")
        core.tensor_scalar_ops(pred, condition, [("not_equal", 0.0, False)])
    if is_tensor(y):
        core.tensor_copy(out, spread(y, shape), "vector")
    else:
        core.memset(out, float(y), "vector")
    core.copy_predicated(out, spread(x, shape) if is_tensor(x) else float(x), pred, False)
    return out


# ---- matmul, transpose, reductions --------------------------------------------------------------

def staged_to_sbuf(t):
    """An operand of an engine that reads SBUF only, given as a PSUM tile (`nl.matmul` of an
    `nl.matmul` or `nl.transpose` result, the legacy `nisa.affine_select` of a matmul's scores): copied to a
    new SBUF tile first, as the compiler legalises it (docs/nki-semantics.md "PSUM operands")."""
    if not (is_tensor(t) and t.buffer == "psum"):
        return t
    staged = new_tile(t.shape, t.dtype, sbuf)
    core.tensor_copy(staged, t, "vector")
    return staged


def _stationary_of(x, transpose_x):
    """The stationary operand [K, M] of x @ y: x itself when given transposed, else a PE transpose."""
    x = staged_to_sbuf(x)
    if transpose_x:
        return x
    no_pe_transpose("nl.matmul(transpose_x=False)")
    core.check_transpose(x, "tensor")
    t = new_tile((x.shape[1], x.shape[0]), x.dtype, psum)
    core.nc_transpose(t, x, "tensor")
    s = new_tile(t.shape, x.dtype, sbuf)
    core.tensor_copy(s, t, "vector")
    return s


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    """x @ y (or x.T @ y with transpose_x) on the Tensor engine, into PSUM as float32."""
    return PendingMatmul(_stationary_of(x, transpose_x), staged_to_sbuf(y))


def transpose(x, dtype=None, mask=None, **kwargs):
    """x.T for a 2-D tile: on the Tensor engine into PSUM, or on the Vector engine when both sides <= 32."""
    small = x.shape[0] <= 32 and x.shape[1] <= 32
    engine = "vector" if small else "tensor"
    if engine == "tensor":
        no_pe_transpose("nl.transpose")
    core.check_transpose(x, engine)
    out = new_tile((x.shape[1], x.shape[0]), dtype or x.dtype, sbuf if small else psum)
    core.nc_transpose(out, x, engine)
    return out


def reduce_axes(axis, ndim):
    """An axis= argument (one axis or several, negative ones from the end) as a list of axes."""
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    return [int(a) + ndim if a < 0 else int(a) for a in axes]


def reduce(op, x, axis, dtype, keepdims, negate=False, mask=None):
    """A reduction along `axis` (nl.sum, nl.max, ... and legacy nisa.tensor_reduce); under a mask, of
    the masked box of x into the matching part of the result (the kept axes)."""
    axes = reduce_axes(axis, len(x.shape))
    kept = [i if i not in axes else None for i in range(len(x.shape)) if keepdims or i not in axes]
    shape = [1 if a is None else x.shape[a] for a in kept]
    m = Mask(mask, x.shape)
    if len(shape) == 1:
        # Only the partitions are left. NKI calls this a [P] tile but broadcasts it against [P, F]
        # tiles as the column it is (the tutorials rely on that), so it is kept as [P, 1].
        out = new_tile(shape + [1], dtype or x.dtype, sbuf)
        if not m.empty:
            core.tensor_reduce(m(out, kept + [None]), op, m(x), axes, negate)
        return out
    out = new_tile(shape, dtype or x.dtype, sbuf)
    if not m.empty:
        core.tensor_reduce(m(out, kept), op, m(x), axes, negate)
    return out


def sum(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001 - the NKI name
    return reduce("add", x, axis, dtype, keepdims, mask=mask)


def max(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001
    return reduce("maximum", x, axis, dtype, keepdims, mask=mask)


def min(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001
    return reduce("minimum", x, axis, dtype, keepdims, mask=mask)


def prod(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
    return reduce("multiply", x, axis, dtype, keepdims, mask=mask)


def all(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001
    return reduce("logical_and", x, axis, dtype or bool_, keepdims, mask=mask)


sum._nkia_op = "add"
max._nkia_op = "maximum"
min._nkia_op = "minimum"
prod._nkia_op = "multiply"
all._nkia_op = "logical_and"


def mean(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
    axes = reduce_axes(axis, len(x.shape))
    n = 1
    for a in axes:
        n *= x.shape[a]
    total = reduce("add", x, axes, float32, keepdims, mask=mask)
    out = new_tile(total.shape, dtype or (x.dtype if x.dtype.startswith(("float", "bfloat")) else float32), sbuf)
    core.tensor_scalar(out, total, "multiply", 1.0 / n, False)
    return out


def var(x, axis, dtype=None, mask=None, **kwargs):
    """Population variance along free axes: mean((x - mean(x))^2)."""
    axes = reduce_axes(axis, len(x.shape))
    m = mean(x, axes, dtype=float32, mask=mask, keepdims=True)
    d = subtract(x, m, dtype=float32, mask=mask)
    return mean(square(d, mask=mask), axes, dtype=dtype or x.dtype, mask=mask)


def softmax(x, axis, dtype=None, mask=None, **kwargs):
    """exp(x - max) / sum(exp(x - max)) along a free axis."""
    neg_max = new_tile(tuple(x.shape[:1]) + (1,) * (len(x.shape) - 1), float32, sbuf)
    core.tensor_reduce(neg_max, "maximum", x, reduce_axes(axis, len(x.shape)), True)
    e = new_tile(x.shape, float32, sbuf)
    total = new_tile(neg_max.shape, float32, sbuf)
    core.activation(e, "exp", x, neg_max, 1.0, total, "add")
    out = new_tile(x.shape, dtype or x.dtype, sbuf)
    core.tensor_scalar_ops(out, e, [("divide", total, False)])
    return out


# ---- iterators ----------------------------------------------------------------------------------

class LoopRange:
    """What nl.affine_range / sequential_range return: iterated, the loop of the kernel (`_run_loop`);
    used as an index (`a[ix, iy]`, the NKI 0.4 frontend's form), the whole range it spans, as the
    slice start:stop:step (as_slice; _nkia.tensor_ops getitem)."""

    def __init__(self, r, affine, scoped):
        self.range, self._affine, self._scoped = r, affine, scoped

    def __iter__(self):
        return _run_loop(self.range, self._affine, self._scoped)

    def __len__(self):
        return len(self.range)

    def as_slice(self):
        return slice(self.range.start, self.range.stop, self.range.step)


def loop(r, affine, scoped):
    """The loop over `r` (a LoopRange, which runs it when iterated)."""
    return LoopRange(r, affine, scoped)


def _run_loop(r, affine, scoped):
    """Runs the iterations of `r` as a loop of the kernel. Affine loops check that no two
    iterations write one HBM location; in a scoped loop (the legacy dialect) tensors created in an
    iteration belong to it (err_local_variable_used_out_of_scope once it ends)."""
    handle = core.loop_begin(affine, scoped)
    try:
        for i in r:
            core.loop_next(handle)
            yield i
        core.loop_done(handle)
    finally:
        core.loop_end(handle)


def affine_range(*args, **kwargs):
    """Iterations that are independent of each other (the compiler may reorder or pipeline them)."""
    return loop(range(*args), True, False)


def sequential_range(*args, **kwargs):
    """Iterations that depend on each other and run in order."""
    return loop(range(*args), False, False)


def static_range(*args, **kwargs):
    """Iterations unrolled at trace time."""
    return range(*args)


# ---- operator names, for nki.isa's op= arguments ------------------------------------------------

_UFUNC_NAMES = {"true_divide": "divide", "absolute": "abs", "arctan": "arctan"}
# NumPy functions (not ufuncs) that kernels pass as op=: reductions name their binary operator.
_NUMPY_FUNCS = {"amax": "maximum", "max": "maximum", "amin": "minimum", "min": "minimum", "sum": "add",
                "prod": "multiply", "copy": "copy", "all": "logical_and", "any": "logical_or"}


def op_name(op):
    """The name of the operator an `op=` argument designates: an nl function, a NumPy ufunc or a name."""
    if isinstance(op, str):
        return op
    name = getattr(op, "_nkia_op", None)
    if name:
        return name
    if isinstance(op, np.ufunc):
        return _UFUNC_NAMES.get(op.__name__, op.__name__)
    if getattr(op, "__module__", "") and getattr(op, "__module__", "").startswith("numpy") and \
            getattr(op, "__name__", None) in _NUMPY_FUNCS:
        return _NUMPY_FUNCS[op.__name__]
    raise NkiError("nkia_unsupported_operator", f"{op!r} is not an operator NKI knows",
                   "pass an nl operator such as nl.add or nl.exp")


# ---- other nl names -----------------------------------------------------------------------------

_NO_VALUE = object()


def _nki_object_fields(cls):
    """The fields of an NKIObject subclass, in declaration order (bases first): (name, default,
    default_factory). A dataclass's own fields, or the annotated names when the class is not a
    dataclass (their defaults are the class attributes; a field without one defaults to None)."""
    import dataclasses
    if dataclasses.is_dataclass(cls):
        return [(f.name, f.default, f.default_factory) for f in dataclasses.fields(cls) if f.init]
    names = {}
    for c in reversed(cls.__mro__):
        for n, a in c.__dict__.get("__annotations__", {}).items():
            if "ClassVar" not in str(a):
                names[n] = None
    return [(n, getattr(cls, n, _NO_VALUE), dataclasses.MISSING) for n in names]


def _nki_object_init(self, *args, **kwargs):
    """The keyword constructor of an NKIObject subclass that defines no __init__ of its own, as the
    kernels build them: by position or keyword, any annotated field (a missing one is its default,
    else None) and any attribute the class declares without an annotation (`section_idx = None`
    in a @dataclass, which dataclasses does not make a field); then __post_init__ when defined."""
    import dataclasses
    cls = type(self)
    fields = _nki_object_fields(cls)
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes {len(fields)} positional arguments but {len(args)} were given")
    values = {}
    for (name, _, _), value in zip(fields, args):
        values[name] = value
    for name, value in kwargs.items():
        if name in values:
            raise TypeError(f"{cls.__name__}() got multiple values for argument '{name}'")
        declared = any(name == f[0] for f in fields) or any(
            name in c.__dict__ and not callable(c.__dict__[name]) for c in cls.__mro__ if c is not object)
        if not declared:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument '{name}'")
        values[name] = value
    for name, default, factory in fields:
        if name not in values:
            if factory is not dataclasses.MISSING:
                values[name] = factory()
            elif default is not dataclasses.MISSING and default is not _NO_VALUE:
                values[name] = default
            else:
                values[name] = None
    for name, value in values.items():
        object.__setattr__(self, name, value)
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


class NKIObject:
    """Base class for kernel-side configuration objects (nl.NKIObject). A subclass that defines no
    __init__ is built with keywords (or positions) naming its fields, with or without @dataclass:
    nki-library builds `Configs(...)` (annotated, no decorator, omitting fields without defaults)
    and `SectionParams(section_idx=...)` (a @dataclass whose attributes carry no annotation)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = next((c.__dict__["__init__"] for c in cls.__mro__[1:]
                    if c not in (NKIObject, object) and "__init__" in c.__dict__), None)
        # Installed before @dataclass runs, which keeps an __init__ the class already holds.
        if "__init__" not in cls.__dict__ and (own is None or own is _nki_object_init):
            cls.__init__ = _nki_object_init


def loop_reduce(x, op, loop_indices=None, dtype=None, mask=None, **kwargs):
    return LoopReduce(x, op_name(op))


def rand(shape, dtype=None, buffer=None, name="", **kwargs):
    """A new tile of values uniform in [0, 1) (float32 unless dtype= says otherwise): one rng
    instruction, drawn from the launch's generator (seeded per launch; not the device's values)."""
    t = ndarray(shape, dtype or float32, buffer or sbuf, name) if name or buffer is not None else \
        new_tile(shape, dtype or float32, sbuf)
    core.rand_uniform(t)
    return t


def random_seed(seed, **kwargs):
    """nl.random_seed(seed): the random values after it (nl.rand, dropout) restart from the value of
    the [1, 1] tile `seed`, so setting the same seed again repeats them (one set_rng_seed)."""
    core.set_rng_seed(seed)


def dropout(x, rate, dtype=None, mask=None, **kwargs):
    """A new tile of x with each element replaced by 0 with probability rate (a number or a [P, 1]
    tile), as nisa.dropout; the kept elements are not rescaled."""
    t = new_tile(x.shape, x.dtype, sbuf)
    m = Mask(mask, x.shape)
    if not m.empty:
        core.dropout(m(t), m(x), m(rate) if is_tensor(rate) else float(rate))
    t = m.mark(t)
    return t if dtype is None or dtype_name(dtype) == dtype_name(x.dtype) else copy(t, dtype, mask)


def device_print(print_prefix, tensor, **kwargs):
    """nl.device_print(prefix, t): on a device the runtime exports the tile to its debug stream; here,
    as in AWS's CPU simulation, the prefix and the tile's values are printed to the kernel's output
    when the run computes (a trace prints the shape and dtype only). It changes no value and adds
    no instruction to the trace."""
    if not isinstance(print_prefix, str):
        raise NkiError("nkia_bad_operand", f"nl.device_print's prefix must be a constant string, got "
                       f"{type(print_prefix).__name__}", "pass a string literal as the first argument")
    if not is_tensor(tensor) or isinstance(tensor, IndirectRows):
        raise NkiError("nkia_bad_operand", f"nl.device_print prints a tensor, got {type(tensor).__name__}",
                       "pass an SBUF, PSUM or HBM tensor (or a view of one) as the second argument")
    tile = getattr(tensor, "_nkia_tile", tensor)  # a legacy matmul's result lands in PSUM first
    values = core.printed_values(tile)
    if values is None:
        print(print_prefix, f"<{dtype_name(tile.dtype_str)}{list(tile.shape)}: values are not computed in a trace>")
    else:
        print(print_prefix, values)


class nc(builtins.int):
    """nl.nc(n): a launch-grid dimension of n instances spread over n physical NeuronCores
    (``kernel[nl.nc(2)]``, ``kernel[nl.nc(2) * 2, 2]``). It is the number n: the simulator runs a grid's
    instances alike wherever they would run (two instances are the two cores of LNC=2)."""


def spmd_dim(*dims):
    """nl.spmd_dim(a, b, ...): one launch-grid dimension of a * b * ... instances, whichever of them
    are nl.nc dimensions (``kernel[nl.spmd_dim(nl.nc(2), 2), 2]`` is a [4, 2] grid)."""
    n = 1
    for d in dims:
        n *= builtins.int(d)
    return n


__all__ = [
    # dtypes
    "dtype", "dtype_name", "float32", "bfloat16", "float16", "tfloat32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2",
    "int8", "int16", "int32", "uint8", "uint16", "uint32", "bool_", "float32r", "bool", "float8_e4m3fn_x4",
    "float8_e5m2_x4", "float4_e2m1fn_x4", "float8_e8m0fnu", "fp32", "bf16", "fp16",
    # buffers, tile limits, creation
    "sbuf", "psum", "hbm", "private_hbm", "shared_hbm", "tile_size", "ndarray", "empty_like", "full", "zeros", "ones",
    "zeros_like",
    # data movement
    "load", "store", "copy", "load_transpose2d", "shared_constant", "shared_identity_matrix", "broadcast_to", "ds",
    # elementwise
    "result_shape", "add", "subtract", "multiply", "divide", "maximum", "minimum", "abs_max", "abs_min", "power",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "fmod", "mod", "exp", "log", "sqrt",
    "rsqrt", "reciprocal", "tanh", "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "gelu_apprx_sigmoid", "mish",
    "gelu_dx", "silu_dx", "erf_dx", "invert", "logical_not", "silu", "softplus", "sin", "cos", "tan", "arctan", "erf",
    "abs", "negative", "sign", "square", "floor", "ceil", "trunc", "rint", "gather_flattened", "where",
    # matmul, transpose, reductions
    "PendingMatmul", "matmul", "transpose", "sum", "max", "min", "prod", "all", "mean", "var", "softmax",
    # iterators, operator names, index tiles, SPMD
    "affine_range", "sequential_range", "static_range", "loop_reduce", "op_name", "IndexTile", "Predicate", "par_dim",
    "arange", "mgrid", "num_programs", "program_id", "program_ndim", "nc", "spmd_dim", "NKIObject",
    # debugging, scheduling directives, dtype limits
    "device_print", "no_reorder", "finfo",
    # random values
    "rand", "random_seed", "dropout",
]
