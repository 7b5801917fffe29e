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
    if isinstance(value, (int, float, bool)) or hasattr(value, "__float__") and not lang._is_tensor(value):
        return float(value)
    raise NkiError("nkia_bad_operand", f"{what} must be a number here, got {type(value).__name__}",
                   "pass a Python number (per-partition [P, 1] operands come with a later version)")


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
