"""neuronxcc.nki.isa (legacy dialect): instructions that return their result tile, as simulated
by nki-agent. They lower onto the same instruction core as nki.isa."""
import _nkia_core as core
from _nkia import isa_common, lang
from _nkia.isa_common import (gpsimd_engine, scalar_engine, tensor_engine,  # noqa: F401
                              unknown_engine, vector_engine)


def _out(shape, dtype, default):
    return lang.ndarray(shape, dtype or default, lang.sbuf)


def tensor_tensor(data1, data2, op, dtype=None, mask=None, engine=None, **kwargs):
    out = _out(lang.result_shape(data1, data2), dtype, core.promote(data1.dtype, data2.dtype))
    core.tensor_tensor(out, data1, data2, lang.op_name(op))
    return out


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, dtype=None,
                  mask=None, **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    core.tensor_scalar(out, data, lang.op_name(op0), isa_common.scalar_operand(operand0, "operand0"), bool(reverse0))
    if op1 is not None:
        core.tensor_scalar(out, out, lang.op_name(op1), isa_common.scalar_operand(operand1, "operand1"), bool(reverse1))
    return out


def activation(op, data, bias=None, scale=1.0, dtype=None, mask=None, **kwargs):
    out = _out(data.shape, dtype, data.dtype)
    isa_common.activation(out, op, data, bias, scale)
    return out


def tensor_copy(src, dtype=None, mask=None, engine=None, **kwargs):
    out = _out(src.shape, dtype, src.dtype)
    core.tensor_copy(out, src, isa_common.engine_name(engine))
    return out


def memset(shape, value, dtype, mask=None, engine=None, **kwargs):
    out = _out(shape, dtype, dtype)
    core.memset(out, float(value), isa_common.engine_name(engine))
    return out


def nc_matmul(stationary, moving, mask=None, **kwargs):
    """stationary[K, M].T @ moving[K, N] into PSUM (float32); `psum += nc_matmul(...)` accumulates."""
    return lang.PendingMatmul(stationary, moving)


def nc_transpose(data, mask=None, dtype=None, engine=None, **kwargs):
    small = data.shape[0] <= 32 and data.shape[1] <= 32
    eng = isa_common.engine_name(engine) if engine is not None else ("vector" if small else "tensor")
    core.check_transpose(data, eng)
    out = lang.ndarray((data.shape[1], data.shape[0]), dtype or data.dtype, lang.psum if eng == "tensor" else lang.sbuf)
    core.nc_transpose(out, data, eng)
    return out


def tensor_reduce(op, data, axis, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    return lang._reduce(lang.op_name(op), data, axis, dtype, keepdims, negate)
