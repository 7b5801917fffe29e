"""NKI element types: the nl dtype names (nl.float32, nl.bfloat16, ...), the names every other
spelling of a dtype maps to (NumPy dtypes and types, aliases such as "bf16"), their sizes
(sizeinbytes), and the float types' limits (nl.fp32.min, ..., and nl.finfo as NumPy's finfo).

Part of the nl API that _nkia.lang re-exports; the names in ``__all__`` are that part. Imports
nothing of nki-agent's but its error type: every other front-end module may import this one. It
never creates or touches a tensor.
"""
import numpy as np

from _nkia.errors import NkiError

__all__ = ["dtype", "dtype_name", "float32", "bfloat16", "float16", "tfloat32", "float8_e4m3", "float8_e4m3fn",
           "float8_e5m2", "int8", "int16", "int32", "uint8", "uint16", "uint32", "bool_", "float32r", "bool",
           "float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4", "float8_e8m0fnu", "fp32", "bf16", "fp16",
           "finfo"]


class dtype(str):
    """An NKI element type. Compares equal to its name, to the matching NumPy dtype and to aliases,
    so ``t.dtype == nl.float32``, ``== np.float32`` and ``== 'float32'`` all hold."""

    def __eq__(self, other):
        try:
            return str.__eq__(self, dtype_name(other))
        except NkiError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__

    @property
    def itemsize(self):
        return _ITEMSIZE[str(self)]


_ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "tfloat32": 4, "float8_e4m3": 1, "float8_e4m3fn": 1,
             "float8_e5m2": 1, "int8": 1, "int16": 2, "int32": 4, "uint8": 1, "uint16": 2, "uint32": 4, "bool": 1,
             # The packed MX types of NeuronCore-v4 (OCP MX): four float8 values in 4 bytes, four float4 values
             # in 2; float8_e8m0fnu, an MX scale, is one byte.
             "float8_e4m3fn_x4": 4, "float8_e5m2_x4": 4, "float4_e2m1fn_x4": 2, "float8_e8m0fnu": 1}
_NUMPY_NAMES = {"float32": "float32", "float16": "float16", "int8": "int8", "int16": "int16", "int32": "int32",
                "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "bool": "bool", "float64": "float32",
                "int64": "int32", "uint64": "uint32"}
_NUMPY_DTYPES = ("bfloat16", "tfloat32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")
_ALIASES = {"bool_": "bool", "fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "tf32": "tfloat32",
            "float32r": "float32"}


def dtype_name(d):
    """The canonical name of anything used as a dtype: an nl dtype, a NumPy dtype or type, a name."""
    if isinstance(d, dtype):
        return str(d)
    if isinstance(d, str):
        name = _ALIASES.get(d, d)
        if name in _ITEMSIZE:
            return name
    else:
        try:
            name = np.dtype(d).name
        except TypeError:
            name = None
        if name in _NUMPY_NAMES:
            return _NUMPY_NAMES[name]
        if name in _NUMPY_DTYPES:  # the NumPy dtypes of the nl types NumPy lacks (_nkia.numpy_dtypes)
            return name
    raise NkiError("nkia_unknown_dtype", f"{d!r} is not an NKI dtype",
                   "use an nl dtype such as nl.float32, nl.bfloat16, nl.float16 or nl.int32")


def itemsize_or(name, default):
    """The bytes per element of the canonical dtype `name`; `default` for a name that is no dtype."""
    return _ITEMSIZE.get(name, default)


float32 = dtype("float32")
bfloat16 = dtype("bfloat16")
float16 = dtype("float16")
tfloat32 = dtype("tfloat32")
float8_e4m3 = dtype("float8_e4m3")
float8_e4m3fn = dtype("float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2")
int8, int16, int32 = dtype("int8"), dtype("int16"), dtype("int32")
uint8, uint16, uint32 = dtype("uint8"), dtype("uint16"), dtype("uint32")
bool_ = dtype("bool")
float32r = float32  # legacy: fp32 "round" mode for matmul operands; same values here
bool = bool_  # noqa: A001 - nl.bool, as the current dialect spells it
# Packed (x4) MX data and the E8M0 scale type of NeuronCore-v4: tensors of them hold their bits
# (nki-agent's core reads the values inside for nc_matmul_mx and writes them in quantize_mx).
float8_e4m3fn_x4 = dtype("float8_e4m3fn_x4")
float8_e5m2_x4 = dtype("float8_e5m2_x4")
float4_e2m1fn_x4 = dtype("float4_e2m1fn_x4")
float8_e8m0fnu = dtype("float8_e8m0fnu")


class _Limits:
    """nl.fp32 / nl.bf16 / nl.fp16: the finite range of a float type (nl.fp32.min is the most
    negative float32, the fill value of masks and affine_select)."""

    def __init__(self, lo, hi):
        self.min, self.max = lo, hi


fp32 = _Limits(-3.4028234663852886e38, 3.4028234663852886e38)
bf16 = _Limits(-3.3895313892515355e38, 3.3895313892515355e38)
fp16 = _Limits(-65504.0, 65504.0)


def sizeinbytes(d):
    """The bytes one element of the dtype `d` takes (nki.language.constants.sizeinbytes)."""
    return _ITEMSIZE[dtype_name(d)]


# (storage bits, exponent bits, mantissa bits, largest finite value) of each float type: nl.finfo's
# numbers follow from them. float8_e4m3 is the IEEE-style format of NeuronCore-v2/v3 (max 240),
# float8_e4m3fn the OCP one without infinities (max 448); tfloat32 is stored in 32 bits.
_FLOAT_FORMATS = {"float32": (32, 8, 23, 3.4028234663852886e38), "tfloat32": (32, 8, 10, 3.4011621342146535e38),
                  "bfloat16": (16, 8, 7, 3.3895313892515355e38), "float16": (16, 5, 10, 65504.0),
                  "float8_e4m3": (8, 4, 3, 240.0), "float8_e4m3fn": (8, 4, 3, 448.0),
                  "float8_e5m2": (8, 5, 2, 57344.0)}


class finfo:
    """nl.finfo(dtype): the limits of an NKI float type, named as NumPy's finfo names them: bits,
    eps (the gap from 1.0 to the next value), max, min (= -max), tiny and smallest_normal (the
    smallest positive normal value), smallest_subnormal, nexp and nmant (exponent and mantissa
    bits), dtype. Python floats; integer types are refused, as NumPy refuses them."""

    def __init__(self, d):
        name = dtype_name(d)
        if name not in _FLOAT_FORMATS:
            raise NkiError("nkia_unknown_dtype", f"nl.finfo takes a float dtype, not {name}",
                           "use nl.finfo with nl.float32, nl.bfloat16, nl.float16, nl.tfloat32 or a float8 type; "
                           "the range of an integer type is numpy.iinfo's")
        self.bits, self.nexp, self.nmant, self.max = _FLOAT_FORMATS[name]
        self.dtype = dtype(name)
        self.min = -self.max
        self.eps = 2.0 ** -self.nmant
        bias = 2 ** (self.nexp - 1) - 1
        self.tiny = self.smallest_normal = 2.0 ** (1 - bias)
        self.smallest_subnormal = 2.0 ** (1 - bias - self.nmant)

    def __repr__(self):
        return f"finfo(min={self.min:g}, max={self.max:g}, eps={self.eps:g}, dtype={self.dtype})"
