"""nki.isa (current dialect): instructions with an explicit destination, as simulated by nki-agent.
Each call runs on the C++ instruction core: it checks the operands, computes, and is traced."""
import _nkia_core as core
from _nkia import isa_common, lang
from _nkia.isa_common import (gpsimd_engine, scalar_engine, tensor_engine,  # noqa: F401
                              unknown_engine, vector_engine)


def dma_copy(dst, src, **kwargs):
    core.dma_copy(dst, src)


def tensor_tensor(dst, data1, data2, op, engine=None, **kwargs):
    core.tensor_tensor(dst, data1, data2, lang.op_name(op))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, **kwargs):
    core.tensor_scalar(dst, data, lang.op_name(op0), isa_common.scalar_operand(operand0, "operand0"), bool(reverse0))
    if op1 is not None:
        core.tensor_scalar(dst, dst, lang.op_name(op1), isa_common.scalar_operand(operand1, "operand1"), bool(reverse1))


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
