"""Where NKI tensors live and who places them: the buffers kernels name (nl.sbuf, nl.psum and the
HBM kinds), buffers a kernel places itself (DirectBuffer, made by nki.compiler's allocators:
direct allocation), the allocation of every tensor the front end creates (create, new_tile), and
the rules a kernel that places its on-chip tensors itself must follow where an nl / nisa call
would need the compiler to allocate for it.

nl.sbuf / nl.psum / nl.hbm / nl.private_hbm / nl.shared_hbm are nl names (_nkia.lang re-exports
them). The internal API: new_tile (the result and scratch tiles of nl / nisa calls), create,
DirectBuffer, direct_kernel, set_force_auto_alloc (nki.compiler.force_auto_alloc, set while such a
kernel runs), require_explicit_bias and no_pe_transpose. Imports only the core, the error type and
_nkia.dtypes; it never computes.
"""
import builtins

import numpy as np

import _nkia_core as core
from _nkia import dtypes
from _nkia.errors import NkiError


class Buffer(str):
    """A memory as kernels name it; its text is the core's buffer name."""


class DirectBuffer(Buffer):
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


class _AnyHbm(Buffer):
    """nl.hbm: device memory of either kind, so a kernel input (shared_hbm here) compares equal to it,
    as NKI's MX tutorial asserts on the device (`stationary_hbm.buffer == nl.hbm`)."""

    def __eq__(self, other):
        return str.__eq__(self, other) or other in ("shared_hbm", "private_hbm")

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


sbuf = Buffer("sbuf")
psum = Buffer("psum")
hbm = _AnyHbm("hbm")
private_hbm = Buffer("private_hbm")
shared_hbm = Buffer("shared_hbm")


# Set while a kernel decorated with nki.compiler.force_auto_alloc runs: placements are ignored.
_force_auto_alloc = False


def set_force_auto_alloc(on):
    """Turns nki.compiler.force_auto_alloc on (while such a kernel runs) or off."""
    global _force_auto_alloc
    _force_auto_alloc = builtins.bool(on)


def _name(name):
    return name if isinstance(name, str) else ""


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


def create(dims, blocks, dtype, buffer, name, origin, address=None):
    """The tensor, with where the kernel placed it (direct allocation, address=) when it did."""
    dt = dtypes.dtype_name(dtype)
    buf = str(buffer or sbuf)
    placement = None
    if _force_auto_alloc:
        pass  # every tensor allocated automatically, whatever the kernel asked for
    elif isinstance(buffer, DirectBuffer):
        placement = (True, buffer.places(dims, blocks, dtypes.itemsize_or(dt, 4)))
    elif address is not None and buf in ("sbuf", "psum"):
        try:
            part, offset = (int(a) for a in address)
        except (TypeError, ValueError):
            raise NkiError("nkia_bad_operand", f"address={address!r} is not a (partition, byte offset) pair",
                           "give address=(start partition, byte offset within each partition)") from None
        placement = (False, [(-1, part, offset)])
    return core.ndarray(_shape(dims), dt, buf, _name(name), blocks, placement is None, origin, placement)


def new_tile(shape, dtype, buffer=None, origin="result"):
    """A tile an nl / nisa call creates (its result, or with origin "scratch" part of the work of one
    instruction): allocated by the compiler."""
    dims = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    t = create(dims, 0, dtype, buffer, "", origin)
    t._nkia_result = True  # computed by the kernel: its truth is a value (_nkia.tensor_ops truth)
    return t


def direct_kernel():
    """Whether the running kernel places its on-chip tensors itself (ncc.sbuf / ncc.psum allocation)."""
    ctx = core.current_context()
    return ctx is not None and ctx.direct_allocation


def require_explicit_bias(api):
    """In a direct-allocation kernel an activation needs an explicit bias tile: the compiler cannot
    allocate the zero bias it adds otherwise."""
    if direct_kernel():
        raise NkiError("err_bias_tensor_must_be_specified_in_allocation",
                       f"{api} runs as an activation on the Scalar engine, which adds a [P, 1] bias tile; in a kernel "
                       f"that places its on-chip tensors itself (direct allocation) the compiler cannot allocate the "
                       f"zero bias it adds otherwise",
                       "allocate a [P, 1] float32 tile with your allocator, zero it (zero[...] = 0.0) and call "
                       "nisa.activation(op=..., data=t, bias=zero), assigning the result into a placed tile")


def no_pe_transpose(api):
    """Direct-allocation kernels cannot transpose on the Tensor engine: the compiler would allocate
    the identity matrix it multiplies by."""
    if direct_kernel():
        raise NkiError("err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel",
                       f"{api} transposes on the Tensor engine, through a matmul with an identity matrix the "
                       f"compiler allocates; a kernel that places its on-chip tensors itself (direct allocation) "
                       f"cannot have one",
                       "pass the left operand already transposed (nl.matmul(xT, y, transpose_x=True)); or load an "
                       "identity into a placed tile and transpose with nisa.nc_matmul(x, identity); or use "
                       "nisa.nc_transpose(t, engine=nisa.vector_engine) for tiles up to 32x32")
