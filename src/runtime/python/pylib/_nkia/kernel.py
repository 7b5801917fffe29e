"""Kernel objects and the entry points of both NKI dialects.

``@nki.jit`` (with or without arguments, any ``mode``), ``nki.baremetal``, ``nki.benchmark``,
``nki.profile``, ``nki.trace``, ``nki.simulate_kernel`` and ``nki.simulate`` all produce or run a
``Kernel``; ``kernel[grid](...)`` is an SPMD launch. Running a kernel here means simulating it: the
arguments become HBM tensors, the body runs eagerly in program order on the C++ core, and the
returned HBM tensors come back as NumPy arrays (``TypedArray`` when the type is one NumPy lacks).
"""
import functools

import numpy as np

import _nkia_core as core

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
        return value
    if isinstance(value, np.ndarray):
        return core.Tensor.from_numpy(np.ascontiguousarray(value), getattr(value, "nki_dtype", None) or "", name)
    return value  # a compile-time constant: int, float, tuple, dtype, ...


def _to_host(value):
    if isinstance(value, core.Tensor):
        arr = value.numpy()
        return TypedArray(arr, value.dtype_str) if value.dtype_str in core.NARROW_DTYPES else arr
    if isinstance(value, tuple):
        return tuple(_to_host(v) for v in value)
    if isinstance(value, list):
        return [_to_host(v) for v in value]
    return value


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
                raise LaunchError("a kernel called from another kernel cannot have an SPMD grid")
            return self.func(*args, **kwargs)
        names = list(self.func.__code__.co_varnames[: self.func.__code__.co_argcount])
        hbm_args = [_to_hbm(a, names[i] if i < len(names) else f"arg{i}") for i, a in enumerate(args)]
        hbm_kwargs = {k: _to_hbm(v, k) for k, v in kwargs.items()}
        result = core.launch(self.func, hbm_args, hbm_kwargs, list(self.grid))
        # Old-style kernels write trailing output arguments and return nothing: hand back the
        # (possibly mutated) tensor arguments' host arrays, as the simulator writes inputs back.
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray) and isinstance(hbm_args[i], core.Tensor) and hbm_args[i].written:
                a[...] = hbm_args[i].numpy().astype(a.dtype, copy=False)
        return _to_host(result)


def _decorator(mode):
    def deco(func=None, **options):
        if func is None:
            return lambda f: Kernel(f, mode=options.pop("mode", mode), **options)
        if isinstance(func, Kernel):
            return Kernel(func.func, mode, **{**func.options, **options})
        return Kernel(func, mode=options.pop("mode", mode), **options)
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
