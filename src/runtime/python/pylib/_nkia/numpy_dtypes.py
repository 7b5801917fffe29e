"""The nl float types NumPy lacks as NumPy dtypes, as the toolchain has them: bfloat16, tfloat32
and the float8 formats, each a NumPy dtype of its real size (the C++ core's register_numpy_dtype)
named in NumPy's type dictionary, so ``np.dtype(nl.bfloat16).itemsize`` is 2 and
``arr.astype(nl.bfloat16)`` rounds into bfloat16 (to nearest even). NumPy's arithmetic takes such
arrays into float32 (they cast to it safely); a few functions that promote with float16 first
(np.allclose, np.isclose) want ``.astype(np.float32)`` first. An element is a Python float. A
kernel launched on such an array gets a tensor of that type.

Importing this module registers them (once per process); _nkia.lang imports it.
"""
import numpy as np

import _nkia_core as core

NAMES = ("bfloat16", "tfloat32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")
_BY_TYPE = {}

for _name in NAMES:
    _scalar = type(_name, (np.generic,), {"__module__": "numpy", "__doc__": f"NKI's {_name}, as a NumPy type"})
    core.register_numpy_dtype(_scalar, _name)
    np.sctypeDict[_name] = _scalar
    _BY_TYPE[_scalar] = _name


def nki_name(arr):
    """The NKI dtype name of an array of one of these dtypes; None for any other array."""
    return _BY_TYPE.get(getattr(getattr(arr, "dtype", None), "type", None))


def host_values(arr):
    """An array NumPy lacks the type of, as its exact float32 values and the NKI name of the type
    (a kernel argument, nl.static_cast's input); any other array as it is, with no name."""
    name = nki_name(arr)
    if name is None:
        return arr, getattr(arr, "nki_dtype", None)
    return np.asarray(arr).astype(np.float32), name
