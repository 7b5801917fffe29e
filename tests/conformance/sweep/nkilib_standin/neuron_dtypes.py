"""neuron_dtypes (Neuron's NumPy casting helpers), as nki-library's tests and torch references use
it, for nki-agent's sandbox (numerics.py --repo library): `static_cast(array, dtype)` rounds into
the type (nki-agent's NumPy dtypes for NKI's float types), `sizeinbytes`, `is_float_type`. The
packed MX types (`float8_e4m3fn_x4`, ...) are named but cannot be cast to."""
import numpy as np

import nki.language as nl

float8_e4m3fn_x4 = "float8_e4m3fn_x4"
float8_e5m2_x4 = "float8_e5m2_x4"
float4_e2m1fn_x4 = "float4_e2m1fn_x4"
_PACKED = (float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4)


def _np_dtype(dtype):
    if isinstance(dtype, str):
        if dtype in _PACKED:
            raise NotImplementedError(f"neuron_dtypes stand-in: the packed MX type {dtype} has no NumPy dtype here")
        return np.dtype(getattr(nl, dtype, dtype))
    return np.dtype(dtype)


def static_cast(array, dtype):
    return np.asarray(array).astype(_np_dtype(dtype))


def sizeinbytes(dtype):
    return _np_dtype(dtype).itemsize


def is_float_type(dtype):
    try:
        d = _np_dtype(dtype)
    except (TypeError, NotImplementedError):
        return False
    return d.kind == "f" or d.name in ("bfloat16", "tfloat32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")


def finfo(dtype):
    return np.finfo(_np_dtype(dtype))
