"""Kernel objects and the entry points of both NKI dialects.

``@nki.jit`` (with or without arguments, any ``mode``), ``nki.baremetal``, ``nki.benchmark``,
``nki.profile``, ``nki.trace``, ``nki.simulate_kernel`` and ``nki.simulate`` all produce or run a
``Kernel``; ``kernel[grid](...)`` is an SPMD launch. Running a kernel here means simulating it: the
arguments become HBM tensors, the body runs eagerly in program order on the C++ core, and the
returned HBM tensors come back as NumPy arrays (``TypedArray`` when the type is one NumPy lacks).
"""
import dis
import functools
import types

import numpy as np

import _nkia_core as core
from _nkia import buffers
from _nkia import numpy_dtypes
from _nkia import typing as nki_typing
from _nkia.errors import NkiError

MODES = ("auto", "jax", "torchxla", "baremetal", "benchmark", "simulation", "trace", "profile")


class TypedArray(np.ndarray):
    """A NumPy array holding the exact values of a tensor whose NKI dtype NumPy lacks (bfloat16,
    float8_*, tfloat32) as float32; ``nki_dtype`` names the real type."""

    def __new__(cls, values, nki_dtype):
        obj = np.asarray(values, dtype=np.float32).view(cls)
        obj.nki_dtype = nki_dtype
        return obj

    def __array_finalize__(self, obj):
        self.nki_dtype = getattr(obj, "nki_dtype", None)  # views and slices keep the type

    def __array_wrap__(self, out_arr, context=None):
        # Arithmetic on the values gives plain float32 results: the narrow type is not implied.
        plain = out_arr.view(np.ndarray)
        return plain[()] if plain.ndim == 0 else plain


class LaunchError(Exception):
    code = "nkia_bad_launch"


def _to_hbm(value, name):
    if isinstance(value, core.Tensor):
        core.name_argument(value, name)
        return value
    if isinstance(value, np.ndarray):
        values, nki_dtype = numpy_dtypes.host_values(value)
        return core.Tensor.from_numpy(np.ascontiguousarray(values), nki_dtype or "", name)
    return value  # a compile-time constant: int, float, tuple, dtype, ...


def to_host(value):
    # A view (`out.reshape(...)`, `out[0]`) comes back as the array it shows, as a tensor does.
    if isinstance(value, (core.Tensor, core.View)):
        arr = value.numpy()
        return TypedArray(arr, value.dtype_str) if value.dtype_str in core.NARROW_DTYPES else arr
    if isinstance(value, tuple):
        return tuple(to_host(v) for v in value)
    if isinstance(value, list):
        return [to_host(v) for v in value]
    return value


_CACHE, _EXTENDED_ARG = dis.opmap["CACHE"], dis.opmap["EXTENDED_ARG"]
_RETURN_VALUE, _LOAD_CONST = dis.opmap["RETURN_VALUE"], dis.opmap["LOAD_CONST"]


def _value_returns(func):
    """The source lines of func's `return <value>` statements (a bare or implicit `return` gives
    None and is not one): a kernel with any returns its outputs, and its inputs are read-only."""
    # A scan of the raw bytecode (dis.get_instructions costs milliseconds per function, in every
    # fresh kernel process): instructions are two bytes, CACHE entries follow some of them, and
    # EXTENDED_ARG prefixes widen the next one's argument.
    code = func.__code__
    raw = code.co_code
    positions = list(code.co_positions())
    lines = []
    prev_op = prev_arg = None
    ext = 0
    for i in range(0, len(raw), 2):
        op, arg = raw[i], raw[i + 1] | ext
        if op == _CACHE:
            continue
        if op == _EXTENDED_ARG:
            ext = arg << 8
            continue
        ext = 0
        if op == _RETURN_VALUE and not (prev_op == _LOAD_CONST and code.co_consts[prev_arg] is None):
            lines.append(positions[i // 2][0])
        prev_op, prev_arg = op, arg
    return [ln for ln in lines if ln]


def _legacy_dialect(func):
    """Whether func's module is legacy-dialect code: it imported a neuronxcc module (`import
    neuronxcc.nki.language as nl`, `from neuronxcc import nki`), as the coverage sweep tells them."""
    for value in getattr(func, "__globals__", {}).values():
        if isinstance(value, types.ModuleType) and value.__name__.partition(".")[0] == "neuronxcc":
            return True
    return False


def _error_at(func, line, code, message, hint):
    err = NkiError(code, message, hint)
    err.loc = (func.__code__.co_filename, line or func.__code__.co_firstlineno)
    return err


def _returned_tensors(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _returned_tensors(r)]
    return [result] if isinstance(result, (core.Tensor, core.View)) else []


def _check_outputs(func, result, hbm_args, mutable, return_line):
    """The rules on what a kernel hands back: HBM tensors, each one written, and every mutable
    parameter it wrote among them."""
    returned = _returned_tensors(result)
    for t in returned:
        base = t.tensor if isinstance(t, core.View) else t
        if base.buffer in ("sbuf", "psum"):
            raise _error_at(func, return_line, "nkia_kernel_output_not_shared_hbm",
                            f"the kernel returns a tensor in {base.buffer}; outputs must be in shared HBM",
                            "allocate the output with nl.ndarray(shape, dtype, buffer=nl.shared_hbm), store the "
                            "tile into it and return that")
        if not base.written and not base in hbm_args:
            raise _error_at(func, return_line, "err_tensor_output_not_written_to",
                            f"the returned output '{base.name or 'tensor'}' {tuple(base.shape)} is never written",
                            "store into every output (check loop trip counts: use ceiling division and a mask for "
                            "the last tile)")
        if not base in hbm_args:
            core.warn_unwritten_output(base, func.__code__.co_filename, return_line or func.__code__.co_firstlineno)
    bases = [t.tensor if isinstance(t, core.View) else t for t in returned]
    for name, t in mutable.items():
        if t.written and not any(b is t for b in bases):
            raise _error_at(func, return_line, "err_mutable_parameter_not_returned",
                            f"the mutable parameter '{name}' is written but not returned",
                            "return every nt.mutable_tensor parameter the kernel writes")


def _parse_grid(grid):
    if not isinstance(grid, tuple):
        grid = (grid,)
    dims = []
    for g in grid:
        if not isinstance(g, (int, np.integer)) or isinstance(g, bool) or g < 1:
            raise LaunchError(f"SPMD grid dimensions must be positive integers, got {grid!r}")
        dims.append(int(g))
    return tuple(dims)


class Kernel:
    """A function compiled (here: simulated) as an NKI kernel."""

    def __init__(self, func, mode="auto", **options):
        if mode not in MODES:
            raise ValueError(f"unknown nki.jit mode {mode!r}; expected one of {', '.join(MODES)}")
        self.func = func
        self.mode = mode
        self.options = options
        self.grid = ()
        functools.update_wrapper(self, func)

    def __getitem__(self, grid):
        launch = Kernel(self.func, self.mode, **self.options)
        launch.grid = _parse_grid(grid)
        return launch

    def __call__(self, *args, **kwargs):
        ctx = core.current_context()
        if ctx is not None:
            # Called from inside another kernel: a sub-kernel, inlined.
            if self.grid:
                raise NkiError("err_nested_kernel_with_spmd_grid",
                               f"kernel '{self.func.__name__}' is launched with the SPMD grid {list(self.grid)} from "
                               f"inside another kernel; a grid exists only for the top-level launch from the host",
                               "call the inner kernel without a grid (it is inlined) and cover the grid with an "
                               "nl.affine_range loop, or launch it from the host")
            return self.func(*args, **kwargs)
        names = list(self.func.__code__.co_varnames[: self.func.__code__.co_argcount])
        hbm_args = [_to_hbm(a, names[i] if i < len(names) else f"arg{i}") for i, a in enumerate(args)]
        hbm_kwargs = {k: _to_hbm(v, k) for k, v in kwargs.items()}
        # Legacy dialect: a kernel that returns its outputs may not write its inputs, except those
        # annotated nt.mutable_tensor; an old-style kernel (no return value) writes output arguments.
        # The current dialect updates inputs in place (docs/nki-semantics.md "Inputs").
        returns = _value_returns(self.func)
        guard_inputs = returns and _legacy_dialect(self.func)
        annotations = getattr(self.func, "__annotations__", {})
        named = dict(zip(names, hbm_args))
        named.update(hbm_kwargs)
        mutable = {}
        for name, t in named.items():
            if isinstance(t, core.Tensor):
                if annotations.get(name) is nki_typing.mutable_tensor:
                    mutable[name] = t
                elif guard_inputs:
                    core.set_immutable(t, True)
        buffers.set_force_auto_alloc(getattr(self.func, "_nkia_force_auto_alloc", False))
        try:
            result = core.launch(self.func, hbm_args, hbm_kwargs, list(self.grid),
                                 str(self.options.get("platform_target") or ""))
        finally:
            buffers.set_force_auto_alloc(False)
        if returns:
            _check_outputs(self.func, result, [t for t in named.values() if isinstance(t, core.Tensor)], mutable,
                           returns[-1])
        if core.values_sealed():
            return result  # the run's entry is this kernel: its outputs leave as HBM tensors
        # Old-style kernels write trailing output arguments and return nothing: hand back the
        # (possibly mutated) tensor arguments' host arrays, as the simulator writes inputs back.
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray) and isinstance(hbm_args[i], core.Tensor) and hbm_args[i].written:
                a[...] = hbm_args[i].numpy().astype(a.dtype, copy=False)
        return to_host(result)


def _decorator(mode):
    def deco(func=None, **options):
        chosen = options.pop("mode", mode)
        if func is None:
            return lambda f: Kernel(f, mode=chosen, **options)
        if isinstance(func, Kernel):  # nki.jit(kernel, mode=..., ...): re-jitted with more options
            return Kernel(func.func, chosen, **{**func.options, **options})
        return Kernel(func, mode=chosen, **options)
    return deco


jit = _decorator("auto")
baremetal = _decorator("baremetal")
benchmark = _decorator("benchmark")
profile = _decorator("profile")
trace = _decorator("trace")


def simulate_kernel(kernel, *args, **kwargs):
    """Legacy: runs `kernel` (or `kernel[grid]`) on NumPy arrays and returns NumPy outputs."""
    if not isinstance(kernel, Kernel):
        kernel = Kernel(kernel, mode="simulation")
    return kernel(*args, **kwargs)


def simulate(kernel):
    """NKI >= 0.3: ``nki.simulate(kernel)(*args)``."""
    if not isinstance(kernel, Kernel):
        kernel = Kernel(kernel, mode="simulation")
    return kernel
