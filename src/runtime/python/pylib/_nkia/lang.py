"""The NKI language API shared by both dialects: dtypes, buffers, tensor creation, loads and
stores, elementwise math, iterators. Every operation lowers onto the C++ instruction core
(_nkia_core); the dialect modules (nki.language, neuronxcc.nki.language) re-export from here.
"""
import builtins

import numpy as np

import _nkia_core as core
from _nkia.errors import NkiError
from _nkia.spmd import num_programs, program_id, program_ndim  # noqa: F401


# ---- dtypes ------------------------------------------------------------------------------------

class dtype(str):
    """An NKI element type. Compares equal to its name, to the matching NumPy dtype and to aliases,
    so ``t.dtype == nl.float32``, ``== np.float32`` and ``== 'float32'`` all hold."""

    def __eq__(self, other):
        try:
            return str.__eq__(self, dtype_name(other))
        except NkiError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__

    @property
    def itemsize(self):
        return _ITEMSIZE[str(self)]


_ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "tfloat32": 4, "float8_e4m3": 1, "float8_e4m3fn": 1,
             "float8_e5m2": 1, "int8": 1, "int16": 2, "int32": 4, "uint8": 1, "uint16": 2, "uint32": 4, "bool": 1}
_NUMPY_NAMES = {"float32": "float32", "float16": "float16", "int8": "int8", "int16": "int16", "int32": "int32",
                "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "bool": "bool", "float64": "float32",
                "int64": "int32", "uint64": "uint32"}
_ALIASES = {"bool_": "bool", "fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "tf32": "tfloat32",
            "float32r": "float32"}


def dtype_name(d):
    """The canonical name of anything used as a dtype: an nl dtype, a NumPy dtype or type, a name."""
    if isinstance(d, dtype):
        return str(d)
    if isinstance(d, str):
        name = _ALIASES.get(d, d)
        if name in _ITEMSIZE:
            return name
    else:
        try:
            name = np.dtype(d).name
        except TypeError:
            name = None
        if name in _NUMPY_NAMES:
            return _NUMPY_NAMES[name]
    raise NkiError("nkia_unknown_dtype", f"{d!r} is not an NKI dtype",
                   "use an nl dtype such as nl.float32, nl.bfloat16, nl.float16 or nl.int32")


float32 = dtype("float32")
bfloat16 = dtype("bfloat16")
float16 = dtype("float16")
tfloat32 = dtype("tfloat32")
float8_e4m3 = dtype("float8_e4m3")
float8_e4m3fn = dtype("float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2")
int8, int16, int32 = dtype("int8"), dtype("int16"), dtype("int32")
uint8, uint16, uint32 = dtype("uint8"), dtype("uint16"), dtype("uint32")
bool_ = dtype("bool")
float32r = float32  # legacy: fp32 "round" mode for matmul operands; same values here
bool = bool_  # noqa: A001 - nl.bool, as the current dialect spells it
# Packed (x4) and 4-bit formats of NeuronCore-v4: the names exist; tensors of them are refused
# (nkia_unknown_dtype) since the simulator has no storage for them yet.
float8_e4m3fn_x4 = dtype("float8_e4m3fn_x4")
float8_e5m2_x4 = dtype("float8_e5m2_x4")
float4_e2m1fn_x4 = dtype("float4_e2m1fn_x4")
float8_e8m0fnu = dtype("float8_e8m0fnu")


class _Limits:
    """nl.fp32 / nl.bf16 / nl.fp16: the finite range of a float type (nl.fp32.min is the most
    negative float32, the fill value of masks and affine_select)."""

    def __init__(self, lo, hi):
        self.min, self.max = lo, hi


fp32 = _Limits(-3.4028234663852886e38, 3.4028234663852886e38)
bf16 = _Limits(-3.3895313892515355e38, 3.3895313892515355e38)
fp16 = _Limits(-65504.0, 65504.0)


# ---- buffers and constants ----------------------------------------------------------------------

class _Buffer(str):
    pass


class _DirectBuffer(_Buffer):
    """A buffer with a placement the kernel chose (ncc.sbuf.mod_alloc, ncc.psum.alloc(func), ...):
    `placer(block_shape, partitions, tile_bytes)` gives each logical block's (bank, start partition,
    byte offset), blocks in row-major order (bank -1 for SBUF; see _nkia.compiler)."""

    def __new__(cls, buffer, placer=None):
        obj = super().__new__(cls, buffer)
        obj._placer = placer
        return obj

    def places(self, dims, blocks, itemsize):
        block_shape = [int(d) for d in dims[:blocks]]
        partitions = int(dims[blocks]) if len(dims) > blocks else 1
        tile_bytes = itemsize
        for d in dims[blocks + 1:]:
            tile_bytes *= int(d)
        if self._placer is None:
            n = 1
            for d in block_shape:
                n *= d
            return [(0 if str(self) == "psum" else -1, 0, 0)] * builtins.max(n, 1)
        return self._placer(block_shape, partitions, tile_bytes)


sbuf = _Buffer("sbuf")
psum = _Buffer("psum")
hbm = _Buffer("hbm")
private_hbm = _Buffer("private_hbm")
shared_hbm = _Buffer("shared_hbm")


class tile_size:
    """nl.tile_size: the architecture's tile limits (nki-spec §2.4)."""
    pmax = 128
    psum_fmax = 512
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    total_available_sbuf_size = 180224
    sbuf_fmax_bytes = 180224


def _name(name):
    return name if isinstance(name, str) else ""


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


# ---- creation -----------------------------------------------------------------------------------

def ndarray(shape, dtype, buffer=None, name="", **kwargs):
    """A new tensor in `buffer` (SBUF by default). Its contents are undefined until written.
    Legacy block tensors, (blocks..., nl.par_dim(P), F...), are stored that way round: indexing
    the block dimensions away gives [P, F...] tiles. Tensors the kernel places itself (direct
    allocation, `address=`) may share storage on the device, so they are left out of PSUM's
    capacity check."""
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    blocks = next((i for i, d in enumerate(dims) if isinstance(d, _ParDim)), 0)
    if blocks > 0 and isinstance(dims[blocks], _CurrentParDim):
        raise NkiError("err_leading_dimension_of_tensor_must_be_partition",
                       f"the tensor {tuple(int(d) for d in dims)} has block dimensions before its partition dimension "
                       f"(nl.par_dim at position {blocks}); the current dialect (import nki) has no block dimensions",
                       f"put the partition dimension first and fold the blocks into the free dimensions, "
                       f"({int(dims[blocks])}, {', '.join(str(int(d)) for d in dims[:blocks] + dims[blocks + 1:])}), "
                       f"indexing a block as t[:, i, ...]; or keep a Python list of [P, F] tiles")
    return _create(dims, blocks, dtype, buffer, name, "explicit", kwargs.get("address"))


# Set while a kernel decorated with nki.compiler.force_auto_alloc runs: placements are ignored.
_force_auto_alloc = False


def _create(dims, blocks, dtype, buffer, name, origin, address=None):
    """The tensor, with where the kernel placed it (direct allocation, address=) when it did."""
    dt = dtype_name(dtype)
    buf = str(buffer or sbuf)
    placement = None
    if _force_auto_alloc:
        pass  # every tensor allocated automatically, whatever the kernel asked for
    elif isinstance(buffer, _DirectBuffer):
        placement = (True, buffer.places(dims, blocks, _ITEMSIZE.get(dt, 4)))
    elif address is not None and buf in ("sbuf", "psum"):
        try:
            part, offset = (int(a) for a in address)
        except (TypeError, ValueError):
            raise NkiError("nkia_bad_operand", f"address={address!r} is not a (partition, byte offset) pair",
                           "give address=(start partition, byte offset within each partition)") from None
        placement = (False, [(-1, part, offset)])
    return core.ndarray(_shape(dims), dt, buf, _name(name), blocks, placement is None, origin, placement)


def _tile(shape, dtype, buffer=None, origin="result"):
    """A tile an nl / nisa call creates (its result, or with origin "scratch" part of the work of one
    instruction): allocated by the compiler."""
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    return _create(dims, 0, dtype, buffer, "", origin)


def _direct_kernel():
    """Whether the running kernel places its on-chip tensors itself (ncc.sbuf / ncc.psum allocation)."""
    ctx = core.current_context()
    return ctx is not None and ctx.direct_allocation


def empty_like(t, dtype=None, buffer=None, name="", **kwargs):
    return ndarray(t.shape, dtype or t.dtype, buffer, name)


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs):
    buf = str(buffer or sbuf)
    if buf in ("hbm", "private_hbm", "shared_hbm"):
        raise NkiError("err_hbm_tensor_with_init_value_not_supported",
                       f"nl.full/zeros/ones cannot create an initialised tensor in {buf}",
                       "allocate it with nl.ndarray and store values into it with nl.store")
    if buf in ("sbuf", "psum") and (isinstance(buffer, _DirectBuffer) or _direct_kernel()):
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
    if _is_tensor(t) and not isinstance(t, PendingMatmul) and t.buffer not in ("shared_hbm", "private_hbm", "hbm"):
        raise NkiError("err_unsupported_memory",
                       f"{api} {role} must be an HBM tensor, but it is in {t.buffer}",
                       "use nl.load / nl.store only between HBM and SBUF; copy tiles on chip with nl.copy or "
                       "nisa.tensor_copy")


def load(src, dtype=None, mask=None, **kwargs):
    """HBM -> SBUF: a new SBUF tile holding `src` (a tensor or a slice of one). Under a mask only
    the masked box is read; the rest of the tile stays unwritten."""
    _require_hbm(src, "nl.load", "source")
    if isinstance(src, _IndirectRows):
        t = _tile(src.shape, dtype or src.dtype, sbuf)
        core.dma_indirect(t, src.rows, src.index, True, _skip_oob(kwargs.get("oob_mode")))
        return t
    t = _tile(src.shape, dtype or src.dtype, sbuf)
    m = _Mask(mask, src.shape)
    if not m.empty:
        core.dma_copy(m(t), m(src))
    return m.mark(t)


def store(dst, value, mask=None, **kwargs):
    """SBUF -> HBM: writes the tile `value` into `dst` (only the masked box, under a mask). A PSUM
    tile is first copied to SBUF, as the compiler does (DMA cannot read PSUM)."""
    _require_hbm(dst, "nl.store", "destination")
    if isinstance(dst, _IndirectRows):
        core.dma_indirect(value, dst.rows, dst.index, False, _skip_oob(kwargs.get("oob_mode")))
        return
    m = _Mask(mask, dst.shape)
    if m.empty:
        return
    if _is_tensor(value) and value.buffer == "psum":
        staged = _tile(value.shape, value.dtype, sbuf)
        core.tensor_copy(m(staged), m(value), "vector")
        value = staged
    core.dma_copy(m(dst), m(value))


def copy(src, dtype=None, mask=None, **kwargs):
    """A new SBUF tile with the values of `src`."""
    t = _tile(src.shape, dtype or src.dtype, sbuf)
    m = _Mask(mask, src.shape)
    if not m.empty:
        core.tensor_copy(m(t), m(src), "vector")
    return m.mark(t)


copy._nkia_op = "copy"


def load_transpose2d(src, dtype=None, mask=None, **kwargs):
    """HBM [A, B] -> a new SBUF tile [B, A] through the DMA engines."""
    if isinstance(src, _IndirectRows):
        raise NkiError("err_indirect_indices_are_not_supported_with_nki_api",
                       "nl.load_transpose2d cannot take rows chosen by a runtime index",
                       "gather the rows with nl.load(t[idx, ...]) first, then transpose the tile (nl.transpose)")
    if len(src.shape) != 2:
        raise NkiError("err_exceed_max_supported_dimension",
                       f"load_transpose2d takes a 2-D source, got shape {tuple(src.shape)}",
                       "index the source down to [A, B]")
    a, b = src.shape
    t = _tile((b, a), dtype or src.dtype, sbuf)
    core.dma_copy(t, src.affine_view([(0, [(1, 1)]), (0, [(0, 1)])], [b, a]))
    return t


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

def _is_tensor(x):
    return isinstance(x, (core.Tensor, core.View, PendingMatmul, _IndexedRef, _IndirectRows))


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


def _spread(x, shape):
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


def _binary(op, x, y, dtype, mask=None):
    if _is_tensor(x) and _is_tensor(y):
        shape = result_shape(x, y)
        out = _tile(shape, dtype or core.promote(x.dtype, y.dtype), sbuf)
        m = _Mask(mask, shape)
        if not m.empty:
            o = m(out)
            core.tensor_tensor(o, _spread(m(x), o.shape), _spread(m(y), o.shape), op)
        return m.mark(out)
    if _is_tensor(x) or _is_tensor(y):
        t, s, reverse = (x, y, False) if _is_tensor(x) else (y, x, True)
        if not isinstance(s, (int, float, builtins.bool, np.number)):
            raise NkiError("nkia_bad_operand", f"{op}: {type(s).__name__} is neither a tile nor a number",
                           "pass tiles (nl.load the data first) or Python numbers")
        out = _tile(t.shape, dtype or core.promote(t.dtype, core.scalar_dtype(s)), sbuf)
        m = _Mask(mask, t.shape)
        if not m.empty:
            core.tensor_scalar(m(out), m(t), op, float(s), reverse)
        return m.mark(out)
    raise NkiError("nkia_bad_operand", f"{op} needs at least one tile operand",
                   "compute with Python numbers directly, or load the data into a tile")


def _make_binary(name):
    def fn(x, y, dtype=None, mask=None, **kwargs):
        return _binary(name, x, y, dtype, mask)
    fn.__name__ = name
    fn._nkia_op = name
    return fn


def _require_explicit_bias(api):
    """In a direct-allocation kernel an activation needs an explicit bias tile: the compiler cannot
    allocate the zero bias it adds otherwise."""
    if _direct_kernel():
        raise NkiError("err_bias_tensor_must_be_specified_in_allocation",
                       f"{api} runs as an activation on the Scalar engine, which adds a [P, 1] bias tile; in a kernel "
                       f"that places its on-chip tensors itself (direct allocation) the compiler cannot allocate the "
                       f"zero bias it adds otherwise",
                       "allocate a [P, 1] float32 tile with your allocator, zero it (zero[...] = 0.0) and call "
                       "nisa.activation(op=..., data=t, bias=zero), assigning the result into a placed tile")


def _make_unary(name):
    def fn(x, dtype=None, mask=None, **kwargs):
        if not _is_tensor(x):
            raise NkiError("nkia_bad_operand", f"{name} needs a tile operand", "load the data into a tile first")
        _require_explicit_bias(f"nl.{name}")
        out = _tile(x.shape, dtype or (x.dtype if x.dtype.startswith(("float", "bfloat", "tfloat")) else float32), sbuf)
        m = _Mask(mask, x.shape)
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
        if not _is_tensor(x):
            raise NkiError("nkia_bad_operand", f"{name} needs a tile operand", "load the data into a tile first")
        out = _tile(x.shape, dtype or default_dtype or x.dtype, sbuf)
        m = _Mask(mask, x.shape)
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
    out = _tile(indices.shape, dtype or data.dtype, sbuf)
    m = _Mask(mask, indices.shape)
    if not m.empty:
        core.gather_flattened(m(out), m(data, [0] + [None] * (len(data.shape) - 1)), m(indices))
    return m.mark(out)


def where(condition, x, y, dtype=None, mask=None, **kwargs):
    """x where condition is nonzero, else y (tiles of one shape, or numbers for x / y)."""
    shape = tuple(condition.shape)
    out_dtype = dtype or (x.dtype if _is_tensor(x) else (y.dtype if _is_tensor(y) else float32))
    out = _tile(shape, out_dtype, sbuf)
    pred = condition
    if condition.dtype not in ("uint8", "int8", "uint16", "int16", "uint32", "int32", "bool"):
        pred = _tile(shape, uint8, sbuf, origin="scratch")
        core.tensor_scalar_ops(pred, condition, [("not_equal", 0.0, False)])
    if _is_tensor(y):
        core.tensor_copy(out, _spread(y, shape), "vector")
    else:
        core.memset(out, float(y), "vector")
    core.copy_predicated(out, _spread(x, shape) if _is_tensor(x) else float(x), pred, False)
    return out


# ---- matmul, transpose, reductions --------------------------------------------------------------

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


def _no_pe_transpose(api):
    """Direct-allocation kernels cannot transpose on the Tensor engine: the compiler would allocate
    the identity matrix it multiplies by."""
    if _direct_kernel():
        raise NkiError("err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel",
                       f"{api} transposes on the Tensor engine, through a matmul with an identity matrix the "
                       f"compiler allocates; a kernel that places its on-chip tensors itself (direct allocation) "
                       f"cannot have one",
                       "pass the left operand already transposed (nl.matmul(xT, y, transpose_x=True)); or load an "
                       "identity into a placed tile and transpose with nisa.nc_matmul(x, identity); or use "
                       "nisa.nc_transpose(t, engine=nisa.vector_engine) for tiles up to 32x32")


def _stationary_of(x, transpose_x):
    """The stationary operand [K, M] of x @ y: x itself when given transposed, else a PE transpose."""
    if transpose_x:
        return x
    _no_pe_transpose("nl.matmul(transpose_x=False)")
    core.check_transpose(x, "tensor")
    t = _tile((x.shape[1], x.shape[0]), x.dtype, psum)
    core.nc_transpose(t, x, "tensor")
    s = _tile(t.shape, x.dtype, sbuf)
    core.tensor_copy(s, t, "vector")
    return s


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    """x @ y (or x.T @ y with transpose_x) on the Tensor engine, into PSUM as float32."""
    return PendingMatmul(_stationary_of(x, transpose_x), y)


def transpose(x, dtype=None, mask=None, **kwargs):
    """x.T for a 2-D tile: on the Tensor engine into PSUM, or on the Vector engine when both sides <= 32."""
    small = x.shape[0] <= 32 and x.shape[1] <= 32
    engine = "vector" if small else "tensor"
    if engine == "tensor":
        _no_pe_transpose("nl.transpose")
    core.check_transpose(x, engine)
    out = _tile((x.shape[1], x.shape[0]), dtype or x.dtype, sbuf if small else psum)
    core.nc_transpose(out, x, engine)
    return out


def _axes(axis, ndim):
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    return [int(a) + ndim if a < 0 else int(a) for a in axes]


def _reduce(op, x, axis, dtype, keepdims, negate=False, mask=None):
    """A reduction along `axis`; under a mask, of the masked box of x into the matching part of the
    result (the kept axes)."""
    axes = _axes(axis, len(x.shape))
    kept = [i if i not in axes else None for i in range(len(x.shape)) if keepdims or i not in axes]
    shape = [1 if a is None else x.shape[a] for a in kept]
    m = _Mask(mask, x.shape)
    if len(shape) == 1:
        # Only the partitions are left. NKI calls this a [P] tile but broadcasts it against [P, F]
        # tiles as the column it is (the tutorials rely on that), so it is kept as [P, 1].
        out = _tile(shape + [1], dtype or x.dtype, sbuf)
        if not m.empty:
            core.tensor_reduce(m(out, kept + [None]), op, m(x), axes, negate)
        return out
    out = _tile(shape, dtype or x.dtype, sbuf)
    if not m.empty:
        core.tensor_reduce(m(out, kept), op, m(x), axes, negate)
    return out


def sum(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001 - the NKI name
    return _reduce("add", x, axis, dtype, keepdims, mask=mask)


def max(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001
    return _reduce("maximum", x, axis, dtype, keepdims, mask=mask)


def min(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001
    return _reduce("minimum", x, axis, dtype, keepdims, mask=mask)


def prod(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
    return _reduce("multiply", x, axis, dtype, keepdims, mask=mask)


def all(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):  # noqa: A001
    return _reduce("logical_and", x, axis, dtype or bool_, keepdims, mask=mask)


sum._nkia_op = "add"
max._nkia_op = "maximum"
min._nkia_op = "minimum"
prod._nkia_op = "multiply"
all._nkia_op = "logical_and"


def mean(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
    axes = _axes(axis, len(x.shape))
    n = 1
    for a in axes:
        n *= x.shape[a]
    total = _reduce("add", x, axes, float32, keepdims, mask=mask)
    out = _tile(total.shape, dtype or (x.dtype if x.dtype.startswith(("float", "bfloat")) else float32), sbuf)
    core.tensor_scalar(out, total, "multiply", 1.0 / n, False)
    return out


def var(x, axis, dtype=None, mask=None, **kwargs):
    """Population variance along free axes: mean((x - mean(x))^2)."""
    axes = _axes(axis, len(x.shape))
    m = mean(x, axes, dtype=float32, mask=mask, keepdims=True)
    d = subtract(x, m, dtype=float32, mask=mask)
    return mean(square(d, mask=mask), axes, dtype=dtype or x.dtype, mask=mask)


def softmax(x, axis, dtype=None, mask=None, **kwargs):
    """exp(x - max) / sum(exp(x - max)) along a free axis."""
    neg_max = _tile(tuple(x.shape[:1]) + (1,) * (len(x.shape) - 1), float32, sbuf)
    core.tensor_reduce(neg_max, "maximum", x, _axes(axis, len(x.shape)), True)
    e = _tile(x.shape, float32, sbuf)
    total = _tile(neg_max.shape, float32, sbuf)
    core.activation(e, "exp", x, neg_max, 1.0, total, "add")
    out = _tile(x.shape, dtype or x.dtype, sbuf)
    core.tensor_scalar_ops(out, e, [("divide", total, False)])
    return out


# ---- iterators ----------------------------------------------------------------------------------

def _loop(r, affine, scoped):
    """Runs the iterations of `r` as a loop of the kernel. Affine loops check that no two
    iterations write one HBM location; in a scoped loop (the legacy dialect) tensors created in an
    iteration belong to it (err_local_variable_used_out_of_scope once it ends)."""
    loop = core.loop_begin(affine, scoped)
    try:
        for i in r:
            core.loop_next(loop)
            yield i
        core.loop_done(loop)
    finally:
        core.loop_end(loop)


def affine_range(*args, **kwargs):
    """Iterations that are independent of each other (the compiler may reorder or pipeline them)."""
    return _loop(range(*args), True, False)


def sequential_range(*args, **kwargs):
    """Iterations that depend on each other and run in order."""
    return _loop(range(*args), False, False)


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


# ---- index tiles (legacy indexing) --------------------------------------------------------------

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


class _Mask:
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
            ok = [x for x in range(self.space[axis]) if cmp(const + coef * x, 0)]
            if not ok:
                self.empty = True
                continue
            if ok[-1] - ok[0] + 1 != len(ok):
                raise NkiError("err_unsupported_expression_in_mask",
                               "the mask selects a non-contiguous set of positions on one axis",
                               "mask with < / <= / > / >= bounds")
            lo, hi = self.box[axis]
            self.box[axis] = (builtins.max(lo, ok[0]), builtins.min(hi, ok[-1] + 1))
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
            return x._nkia_tile if isinstance(x, _IndexedRef) else x
        if isinstance(x, _IndexedRef):
            return x.restrict(self.box)
        if not _is_tensor(x):
            return x
        key = []
        for i, d in enumerate(x.shape):
            a = i if axes is None else axes[i]
            if a is not None and a < len(self.space) and d == self.space[a] and self.box[a] != (0, d):
                key.append(slice(*self.box[a]))
            else:
                key.append(slice(None))
        return x.view(tuple(key))


class _IndexedRef:
    """A tensor indexed with index tiles whose range runs past the tensor's end: legal only under a
    mask that cuts the range back. Its bounds are checked when an instruction uses it — within the
    mask's box, or in full (err_tensor_access_out_of_bound) when there is no mask."""

    def __init__(self, base, dims, space):
        self.base, self.dims, self.space = base, dims, list(space)

    @property
    def shape(self):
        return tuple(self.space) + tuple(self.base.shape[len(self.dims):])

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def buffer(self):
        return self.base.buffer

    def restrict(self, box):
        n = len(self.space)
        dims = [(c + builtins.sum(coef * box[a][0] for a, coef in terms), terms) for c, terms in self.dims]
        view = self.base.affine_view(dims, [hi - lo for lo, hi in box[:n]])
        rest = box[n:]
        return view.view(tuple([slice(None)] * n + [slice(lo, hi) for lo, hi in rest])) if rest else view

    @property
    def _nkia_tile(self):
        return self.base.affine_view(self.dims, self.space)


class NKIObject:
    """Base class for kernel-side configuration objects (nl.NKIObject): plain Python here."""


class _ParDim(int):
    """nl.par_dim(n): marks the partition dimension of a tensor with leading block dimensions."""


class _CurrentParDim(_ParDim):
    """nl.par_dim(n) of the current dialect (nki.language), which has no block dimensions."""


def par_dim(n):
    return _ParDim(n)


def arange(*args):
    """An index tile of consecutive values (legacy indexing): use nl.arange(n)[:, None] for the
    partition axis and nl.arange(n)[None, :] for a free axis."""
    return IndexTile.arange(*args)


class _MGridResult(tuple):
    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]


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


def _affine_key(self, key):
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


# ---- tensors as Python objects ------------------------------------------------------------------

def _skip_oob(oob_mode):
    """Whether an indirect DMA skips out-of-bounds rows (oob_mode=nisa.oob_mode.skip) instead of failing."""
    return oob_mode is not None and str(oob_mode) == "skip"


class _IndirectRows:
    """``t[idx_tile, ...]``: the rows of an HBM tensor named at run time by an SBUF tile of row
    numbers (one per partition). nl.load gathers them, nl.store scatters into them."""

    def __init__(self, base, index, rest):
        self.base, self.index = base, index
        self.rows = base.view((slice(None),) + tuple(rest))  # axis 0 whole; the rest as indexed

    @property
    def shape(self):
        return (self.index.shape[0],) + tuple(self.rows.shape[1:])

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def buffer(self):
        return self.base.buffer

    @property
    def _nkia_tile(self):
        raise NkiError("err_copy_dynamic_indirect_indices_not_natively_supported",
                       "a tensor indexed with a runtime index tile is used outside nl.load / nl.store",
                       "gather rows with nl.load(t[idx, ...]) and scatter with nl.store(t[idx, ...], value=...)")


class _IndirectAp(_IndirectRows):
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


def _dma_copy_indirect(dst, src, dst_rmw_op, oob_mode, mask=None):
    """nisa.dma_copy with one side an indirect access (_IndirectRows): a gather from HBM rows into a
    tile, or a scatter of a tile's partitions into HBM rows."""
    if isinstance(dst, _IndirectRows) and isinstance(src, _IndirectRows):
        raise NkiError("nkia_bad_operand", "a dma_copy can index rows at run time on one side only",
                       "gather into an SBUF tile first, then scatter the tile")
    if dst_rmw_op is not None or mask is not None:
        raise NkiError("nkia_bad_operand",
                       "an indirect dma_copy takes neither dst_rmw_op nor mask in nki-agent",
                       "gather the rows into a tile, combine on an engine, and scatter the result")
    skip = _skip_oob(oob_mode)
    if isinstance(src, _IndirectRows):
        core.dma_indirect(dst, src.rows, src.index, True, skip)
    else:
        core.dma_indirect(src, dst.rows, dst.index, False, skip)


def _dma_transpose_gather(dst, src, axes, oob_mode):
    """nisa.dma_transpose of rows chosen at run time (t.ap(..., vector_offset=idx)): 2-D only."""
    if not isinstance(src, _IndirectAp) or len(src.shape) != 2:
        raise NkiError("nkia_dma_transpose_layout",
                       "a dma_transpose gathering rows takes a 2-D t.ap(pattern=[[row, R], [1, E]], "
                       "vector_offset=idx, indirect_dim=0) source in nki-agent",
                       "gather [R, E] (R rows of E elements) and transpose it into an [E, R] tile")
    if axes is not None and tuple(int(a) for a in axes) != (1, 0):
        raise NkiError("nkia_dma_transpose_layout", f"a 2-D dma_transpose permutes with axes (1, 0), not {tuple(axes)}",
                       "pass axes=(1, 0) or none")
    core.dma_transpose_gather(dst, src.rows, src.index, _skip_oob(oob_mode))


def _free_slices(items):
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


def _getitem(self, key):
    items = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (core.Tensor, core.View)) for k in items[1:]):
        raise NkiError("err_indirect_indices_free_dim", "a runtime index tile is used on a free dimension",
                       "use runtime indices only on the first (row) dimension; gather within partitions "
                       "with nl.gather_flattened")
    if items and isinstance(items[0], (core.Tensor, core.View)):
        if self.buffer not in ("shared_hbm", "private_hbm"):
            raise NkiError("err_copy_dynamic_indirect_indices_not_natively_supported",
                           f"a {self.buffer} tensor is indexed with a runtime index tile",
                           "index HBM tensors with runtime row indices (nl.load / nl.store)")
        return _IndirectRows(self, items[0], _free_slices(items[1:]))
    if any(isinstance(k, IndexTile) for k in items):
        dims, shape = _affine_key(self, key)
        try:
            return self.affine_view(dims, shape)
        except NkiError as e:
            if e.code != "err_tensor_access_out_of_bound":
                raise
            return _IndexedRef(self, dims, shape)  # a mask may cut it back; checked when used
    return self.view(key)


def _setitem(self, key, value):
    """``t[key] = value``: writes a tile (copied on the Vector engine), a number (memset), a legacy
    matmul (issued straight into a PSUM destination), or an nl.loop_reduce step."""
    dst = _getitem(self, key)
    if isinstance(value, PendingMatmul) and value._tile is None and dst.buffer != "psum" and _direct_kernel():
        raise NkiError("nkia_direct_allocation_mixed",
                       f"a matmul result is assigned into a {dst.buffer} tile: the Tensor engine writes PSUM, so the "
                       f"compiler would allocate a PSUM tile in between, and this kernel places its on-chip tensors "
                       f"itself (direct allocation)",
                       "assign the matmul into a placed PSUM tile (ncc.psum.mod_alloc) and copy that into the SBUF "
                       "tile: res[...] = nl.copy(acc)")
    box = getattr(value, "_nkia_box", None)
    if box is not None and tuple(dst.shape) == tuple(value.shape):
        m = _Mask(None, value.shape)
        m.active, m.box = True, box
        dst, value = m(dst), m(value)
    if isinstance(value, _LoopReduce):
        core.tensor_tensor(dst, dst, _spread(value.x, dst.shape), value.op)
    elif isinstance(value, PendingMatmul) and value._tile is None and dst.buffer == "psum":
        value.issue(core.nc_matmul, dst, value.stationary, value.moving, "overwrite", value.perf_mode)
    elif _is_tensor(value):
        core.assign(dst, value)
    elif isinstance(value, (int, float, builtins.bool, np.number)):
        core.memset(dst, float(value), "vector")
    else:
        raise NkiError("nkia_bad_operand", f"cannot assign a {type(value).__name__} to a tensor",
                       "assign a tile or a number")


class _LoopReduce:
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


def loop_reduce(x, op, loop_indices=None, dtype=None, mask=None, **kwargs):
    return _LoopReduce(x, op_name(op))


def _iadd(self, other):
    """``psum_tile += nl.matmul(...)``: the matmul accumulates into the tile (first write overwrites,
    later ones add); any other += adds in place on the Vector engine."""
    if isinstance(other, PendingMatmul) and other._tile is None:
        other.issue(core.nc_matmul, self, other.stationary, other.moving, "auto", other.perf_mode)
    else:
        core.tensor_tensor(self, self, _spread(other, self.shape), "add") if _is_tensor(other) else \
            core.tensor_scalar(self, self, "add", float(other), False)
    return self


def _in_while_condition(frame):
    """Whether the frame is evaluating the condition of a `while` statement (read from the kernel's
    source, which the runner keeps in linecache)."""
    import ast
    import linecache
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


def _truth(self):
    """A tile used where Python wants True or False. Its values exist only when the kernel runs,
    so the compiler refuses: `and` / `or` / `not` on tiles, or an if / while on tile values."""
    import dis
    import sys
    frame = sys._getframe(1)
    op = next((i.opname for i in dis.get_instructions(frame.f_code) if i.offset == frame.f_lasti), "")
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
    fn = what.rsplit(".", 1)[-1]
    instead = f"nl.{fn}" if fn in globals() and not fn.startswith("_") else "the nl / nisa instruction that computes it"
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
            and any(isinstance(x, np.generic) for x in inputs) and any(_is_tensor(x) for x in inputs)):
        a, b = (float(x) if isinstance(x, np.floating) else int(x) if isinstance(x, np.integer) else x
                for x in inputs)
        return _binary(op, a, b, None)
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
    for cls in (core.Tensor, core.View, PendingMatmul):
        _install_host_math_guards(cls)
    for cls in (core.Tensor, core.View):
        cls.__getitem__ = _getitem
        cls.__setitem__ = _setitem
        cls.__iadd__ = _iadd
        for py_name, op in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                            ("pow", "power"), ("mod", "mod"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                            ("xor", "bitwise_xor"), ("lshift", "left_shift"), ("rshift", "right_shift"),
                            ("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")):
            setattr(cls, f"__{py_name}__", (lambda o: lambda a, b: _binary(o, a, b, None))(op))
            setattr(cls, f"__r{py_name}__", (lambda o: lambda a, b: _binary(o, b, a, None))(op))
        cls.__bool__ = _truth
        cls.__neg__ = lambda a: negative(a)
        cls.__abs__ = lambda a: abs(a)
        cls.dtype = property(lambda t: dtype(t.dtype_str))


_install_operators()

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("np", "core", "NkiError")]
