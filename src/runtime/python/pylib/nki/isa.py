"""nki.isa (current dialect): instructions with an explicit destination, as simulated by nki-agent.
Each call runs on the C++ instruction core: it checks the operands, computes, and is traced."""
import _nkia_core as core
from _nkia import isa_common, lang
from _nkia.isa_common import (get_nc_version, gpsimd_engine, nc_version, scalar_engine,  # noqa: F401
                              tensor_engine, unknown_engine, vector_engine)


def dma_copy(dst, src, **kwargs):
    core.dma_copy(dst, src)


def tensor_tensor(dst, data1, data2, op, engine=None, **kwargs):
    core.tensor_tensor(dst, data1, data2, lang.op_name(op))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, **kwargs):
    isa_common.tensor_scalar(dst, data, op0, operand0, reverse0)
    if op1 is not None:
        isa_common.tensor_scalar(dst, dst, op1, operand1, reverse1)


def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, **kwargs):
    """dst = (data op0 operand0) op1 operand1: operand0 a number or [P, 1] tile, operand1 a tile."""
    tmp = lang.ndarray(data.shape, lang.float32, lang.sbuf)
    isa_common.tensor_scalar(tmp, data, op0, operand0, reverse0)
    if reverse1:
        core.tensor_tensor(dst, operand1, tmp, lang.op_name(op1))
    else:
        core.tensor_tensor(dst, tmp, operand1, lang.op_name(op1))


def reciprocal(dst, data, **kwargs):
    core.activation(dst, "reciprocal", data, None, 1.0)


def iota(dst, pattern, offset=0, channel_multiplier=0, **kwargs):
    core.iota(dst, *isa_common.iota_pattern(dst, pattern, offset, channel_multiplier))


def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value, cmp_op=None, offset=0, **kwargs):
    const, terms = isa_common.iota_pattern(dst, pattern, offset, channel_multiplier)
    core.affine_select(dst, const, terms, lang.op_name(cmp_op) if cmp_op is not None else "equal", on_true_tile,
                       float(on_false_value))


def activation(dst, op, data, bias=None, scale=1.0, **kwargs):
    isa_common.activation(dst, op, data, bias, scale)


def tensor_copy(dst, src, engine=None, **kwargs):
    core.tensor_copy(dst, src, isa_common.engine_name(engine))


def memset(dst, value, engine=None, **kwargs):
    core.memset(dst, float(value), isa_common.engine_name(engine))


def nc_matmul(dst, stationary, moving, accumulate=None, **kwargs):
    """dst[M, N] (PSUM) = stationary[K, M].T @ moving[K, N]. accumulate: None (first write to an
    element overwrites, later ones add), False (overwrite) or True (add)."""
    mode = "auto" if accumulate is None else ("accumulate" if accumulate else "overwrite")
    core.nc_matmul(dst, stationary, moving, mode)


def nc_transpose(dst, data, engine=None, **kwargs):
    small = data.shape[0] <= 32 and data.shape[1] <= 32
    core.nc_transpose(dst, data, isa_common.engine_name(engine) if engine is not None else
                      ("vector" if small and dst.buffer != "psum" else "tensor"))


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, **kwargs):
    core.tensor_reduce(dst, lang.op_name(op), data, lang._axes(axis, len(data.shape)), bool(negate))


def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False, **kwargs):
    core.tensor_tensor_scan(dst, data0, data1, initial if lang._is_tensor(initial) else float(initial),
                            lang.op_name(op0), lang.op_name(op1), bool(reverse0), bool(reverse1))


def bn_stats(dst, data, **kwargs):
    core.bn_stats(dst, data)


def bn_aggr(dst, data, **kwargs):
    core.bn_aggr(dst, data)


def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, **kwargs):
    """activation, and reduce_res[P, 1] = the free-axis reduction of its result."""
    isa_common.activation(dst, op, data, bias, scale)
    core.tensor_reduce(reduce_res, lang.op_name(reduce_op), dst, list(range(1, len(dst.shape))), False)
