"""nki.isa pieces shared by both dialects: engine names, operand handling, the indirect DMAs (rows
chosen at run time) and the DMA transpose's permutations.

Used by nki.isa and neuronxcc.nki.isa; its public names are their internal API, and those that are
nisa names (engines, modes, get_nc_version) are imported by name into both. It never allocates a
tile: each instruction here writes the destination it is given.
"""
import _nkia_core as core
from _nkia import lang
from _nkia.buffers import require_explicit_bias
from _nkia.errors import NkiError
from _nkia.operands import IndirectAp, IndirectRows, is_tensor, skip_oob


class _Engine(str):
    pass


tensor_engine = _Engine("tensor")
vector_engine = _Engine("vector")
scalar_engine = _Engine("scalar")
gpsimd_engine = _Engine("gpsimd")
unknown_engine = _Engine("vector")  # the compiler picks; the Vector engine here


def engine_name(engine):
    return str(engine) if engine is not None else "vector"


def scalar_operand(value, what):
    if not is_tensor(value) and (isinstance(value, (int, float, bool)) or hasattr(value, "__float__")):
        return float(value)
    raise NkiError("nkia_bad_operand", f"{what} must be a number here, got {type(value).__name__}",
                   "pass a Python number")


def activation(dst, op, data, bias=None, scale=1.0, reduce_res=None, reduce_op=None):
    """dst = op(data * scale + bias) on the Scalar engine: scale a number or a [P, 1] tile, bias a
    [P, 1] tile; nl.copy as the function is the identity. With reduce_res ([P, 1]) the float32
    results are also reduced along the free axes (reduce_op, default add) in the same instruction."""
    if bias is None:
        require_explicit_bias("nisa.activation")
    if not is_tensor(scale):
        scale = scalar_operand(scale, "scale")
    core.activation(dst, lang.op_name(op), data, bias, scale, reduce_res,
                    lang.op_name(reduce_op) if reduce_op is not None else "add")


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False):
    """dst = (data op0 operand0) op1 operand1 as one instruction: operands are numbers or [P, 1]
    tiles; an operator may be a unary function (nl.rsqrt, nl.abs) whose operand is ignored."""
    steps = [scalar_step(op0, operand0, reverse0)]
    if op1 is not None:
        steps.append(scalar_step(op1, operand1, reverse1))
    core.tensor_scalar_ops(dst, data, steps)


def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1, reduce_cmd):
    """nisa.tensor_scalar_cumulative in both dialects (each takes its destination as dst=)."""
    cmd = str(getattr(reduce_cmd, "value", reduce_cmd)) if reduce_cmd is not None else "reset_reduce"
    if cmd not in ("reset_reduce", "load_reduce", "reduce"):
        raise NkiError("nkia_bad_operand",
                       f"tensor_scalar_cumulative takes reduce_cmd reset_reduce, load_reduce or reduce, not {cmd}",
                       "start with nisa.reduce_cmd.reset_reduce (or load_reduce with imm1), continue with reduce")
    if cmd == "load_reduce" and imm1 is None:
        raise NkiError("nkia_bad_operand", "tensor_scalar_cumulative with reduce_cmd=load_reduce starts from imm1, "
                       "which is not given", "pass imm1= (a number or a [P, 1] float32 tile)")

    def operand(v, what):
        return v if v is None or is_tensor(v) else scalar_operand(v, what)
    core.tensor_scalar_cumulative(dst, src, lang.op_name(op0), lang.op_name(op1), operand(imm0, "imm0"),
                                  operand(imm1, "imm1"), cmd)


def scalar_step(op, operand, reverse):
    if operand is not None and not is_tensor(operand):
        operand = operand if isinstance(operand, int) and not isinstance(operand, bool) else \
            scalar_operand(operand, "operand")
    return (lang.op_name(op), operand, bool(reverse))


def pattern_view(t, pattern, what):
    """t seen with the free dimensions a [[step, num], ...] pattern walks: t itself when its free
    shape is the nums, else its free elements reshaped to them (a pattern may walk the flattened
    free dimension in more, or fewer, steps than t has axes)."""
    nums = [int(n) for _step, n in pattern]
    free = list(t.shape[1:])
    if free == nums:
        return t
    count = 1
    for n in nums:
        count *= n
    total = 1
    for n in free:
        total *= n
    if count != total:
        raise NkiError("err_store_dst_shape_smaller_than_other_shape",
                       f"'{what}' pattern {pattern} covers {count} elements per partition, but the tile has {total}",
                       "make the pattern's counts multiply to the tile's free size")
    return t.reshape([t.shape[0]] + nums)


def iota_pattern(dst, pattern, offset, channel_multiplier):
    """New-dialect iota/affine_select patterns: value = offset + p * channel_multiplier + sum of
    step_i * index_i over the free dimensions [[step, num], ...]."""
    terms = [(0, int(channel_multiplier))] + [(i + 1, int(step)) for i, (step, _num) in enumerate(pattern)]
    return int(offset), [t for t in terms if t[1] != 0]


def dma_copy_indirect(dst, src, dst_rmw_op, oob_mode, mask=None):
    """nisa.dma_copy with one side an indirect access (IndirectRows): a gather from HBM rows into a
    tile, or a scatter of a tile's partitions into HBM rows."""
    if isinstance(dst, IndirectRows) and isinstance(src, IndirectRows):
        raise NkiError("nkia_bad_operand", "a dma_copy can index rows at run time on one side only",
                       "gather into an SBUF tile first, then scatter the tile")
    if mask is not None:
        raise NkiError("nkia_bad_operand",
                       "an indirect dma_copy takes no mask in nki-agent",
                       "gather the rows into a tile, select on an engine, and scatter the result")
    skip = skip_oob(oob_mode)
    rmw = "" if dst_rmw_op is None else lang.op_name(dst_rmw_op)
    if isinstance(src, IndirectRows):
        core.dma_indirect(dst, src.rows, src.index, True, skip, rmw)
    else:
        core.dma_indirect(src, dst.rows, dst.index, False, skip, rmw)


def dma_transpose_gather(dst, src, axes, oob_mode):
    """nisa.dma_transpose of rows chosen at run time (t.ap(..., vector_offset=idx)): 2-D only."""
    if not isinstance(src, IndirectAp) or len(src.shape) != 2:
        raise NkiError("nkia_dma_transpose_layout",
                       "a dma_transpose gathering rows takes a 2-D t.ap(pattern=[[row, R], [1, E]], "
                       "vector_offset=idx, indirect_dim=0) source in nki-agent",
                       "gather [R, E] (R rows of E elements) and transpose it into an [E, R] tile")
    if axes is not None and tuple(int(a) for a in axes) != (1, 0):
        raise NkiError("nkia_dma_transpose_layout", f"a 2-D dma_transpose permutes with axes (1, 0), not {tuple(axes)}",
                       "pass axes=(1, 0) or none")
    core.dma_transpose_gather(dst, src.rows, src.index, skip_oob(oob_mode))


class matmul_perf_mode:
    """nisa.matmul_perf_mode: nc_matmul's perf_mode= (legacy spelling: perf_mode="double_row_gen3")."""
    none, double_row = "none", "double_row"


def perf_mode_name(perf_mode, options=None):
    """The core's name of an nc_matmul perf_mode= argument: "" for the ordinary mode. Double-row mode
    takes no PE tiling (tile_position) and no transpose mode (is_transpose), given in `options`."""
    if perf_mode is None:
        return ""
    name = str(getattr(perf_mode, "value", perf_mode))
    if name == "none":
        return ""
    if name.startswith("double_row") and options:
        clash = [k for k in ("tile_position", "tile_size", "is_transpose") if options.get(k)]
        if clash:
            raise NkiError("nkia_matmul_double_row_layout",
                           f"nc_matmul(perf_mode={name}) cannot be combined with {', '.join(clash)}",
                           "drop tile_position / tile_size / is_transpose from double-row matmuls, or use the "
                           "ordinary mode")
    return name


class dge_mode:
    """nisa.dge_mode: how a DMA's descriptors are generated (no effect on the values)."""
    unknown, none, swdge, hwdge = "unknown", "none", "swdge", "hwdge"


class oob_mode:
    """nisa.oob_mode: what an indirect DMA does with an out-of-bounds index."""
    error, skip = "error", "skip"


class reduce_cmd:
    """nisa.reduce_cmd: the accumulator command of a reducing instruction."""
    idle, reset, reduce, reset_reduce, load_reduce = "idle", "reset", "reduce", "reset_reduce", "load_reduce"


class engine:
    """nisa.engine: the engines an instruction can be placed on."""
    tensor, vector, scalar, gpsimd, sync, unknown = tensor_engine, vector_engine, scalar_engine, gpsimd_engine, \
        "sync", unknown_engine
    dma = "dma"


class dma_engine:
    """nisa.dma_engine: the queues a DMA between cores can use (nisa.sendrecv's dma_engine=)."""
    dma, gpsimd_dma = "dma", "gpsimd_dma"


class nc_version:
    """nisa.nc_version: the NeuronCore generation of the target."""
    gen2 = 2
    gen3 = 3
    gen4 = 4


def get_nc_version():
    """The running target's generation (its core_version in data/targets/<t>.toml)."""
    return core.target_limit("core_version")
