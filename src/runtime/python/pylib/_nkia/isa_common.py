"""nki.isa pieces shared by both dialects: engine names and operand handling."""
import _nkia_core as core
from _nkia import lang
from _nkia.errors import NkiError


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
    if not lang._is_tensor(value) and (isinstance(value, (int, float, bool)) or hasattr(value, "__float__")):
        return float(value)
    raise NkiError("nkia_bad_operand", f"{what} must be a number here, got {type(value).__name__}",
                   "pass a Python number")


def activation(dst, op, data, bias=None, scale=1.0):
    name = lang.op_name(op)
    if name == "copy":  # nl.copy as an activation: scale and bias only
        if bias is None and float(scale) == 1.0:
            core.tensor_copy(dst, data, "scalar")
            return
        tmp = lang.ndarray(dst.shape, lang.float32, lang.sbuf)
        core.tensor_scalar(tmp, data, "multiply", scalar_operand(scale, "scale"), False)
        if bias is not None:
            core.tensor_tensor(dst, tmp, bias, "add")
        else:
            core.tensor_copy(dst, tmp, "scalar")
        return
    core.activation(dst, name, data, bias, scalar_operand(scale, "scale"))


def tensor_scalar(dst, data, op, operand, reverse):
    """One tensor_scalar step: a Python number, or a [P, 1] tile broadcast along the free axes."""
    if lang._is_tensor(operand):
        core.tensor_scalar_tile(dst, data, lang.op_name(op), operand, bool(reverse))
    else:
        core.tensor_scalar(dst, data, lang.op_name(op), scalar_operand(operand, "operand"), bool(reverse))


def iota_pattern(dst, pattern, offset, channel_multiplier):
    """New-dialect iota/affine_select patterns: value = offset + p * channel_multiplier + sum of
    step_i * index_i over the free dimensions [[step, num], ...]."""
    terms = [(0, int(channel_multiplier))] + [(i + 1, int(step)) for i, (step, _num) in enumerate(pattern)]
    return int(offset), [t for t in terms if t[1] != 0]


class nc_version:
    """nisa.nc_version: the NeuronCore generation of the target."""
    gen2 = 2
    gen3 = 3
    gen4 = 4


def get_nc_version():
    ctx = core.current_context()
    return nc_version.gen3 if ctx is not None and ctx.target == "trn2" else nc_version.gen2
