#!/usr/bin/python3.11
"""NumPy oracle for tests/unit/test_tensor_ops.cpp and test_tensor_views.cpp.

Usage: tensor_ops.py DIR

DIR/cases.json is a list of cases; each names its inputs (.npy files in DIR, narrow float types
already written as their float32 values) and the id under which to answer. For every case the
oracle writes DIR/r<id>.npy (the answer) and records {"dtype", "shape", ...} — or {"error": msg}
when NumPy rejects the operation — in DIR/results.json.

Case kinds (the "kind" field):
  binary   {op, a, b, mode, rnd}       mode "native": NumPy's own ufunc on the native dtypes;
                                       "f32": both operands cast to float32, computed in float32;
                                       "i64": both cast to int64, computed in int64.
                                       The result is then rounded / wrapped into `rnd` (optional).
  unary    {op, a, mode, rnd}          "native" | "f64" (formula in float64 from the input values) |
                                       "i64".
  reduce   {op, a, axes, keepdims, mode, rnd}   mode "f64" or "i64"; axes [] = all axes.
  arg      {op: argmax|argmin, a, axis, keepdims}   int32 answer.
  matmul   {a, b, mode, rnd}           "f64": answer stacked as [ref, |a|@|b|] (float64; the ref
                                       rounded to rnd first when given); "i64": exact, wrapped.
  round    {a, rnd}                    float32 values rounded into rnd (answer as float32).
  astype   {a, rnd}                    NumPy's astype (wrap-around for integers).
  broadcast {shapes: [s1, s2]}         np.broadcast_shapes; results.json holds the shape.
  result_type {pairs: [[t1, t2], ...]} np.result_type of each pair, in results.json "types".
  view     {a, ops}                    the chain of view operations (see apply_chain) applied to a;
                                       results.json: "shares" (np.shares_memory(answer, a)),
                                       "c_contiguous", "strides" (in elements), "offset" (elements
                                       from a's first element).
  slice_table {n, slices}              list(range(n))[start:stop:step] for each [start, stop, step]
                                       (null for None), in results.json "indices".
  assign   {a, dst_ops, src | src_ops} a copy of a, then (a after dst_ops)[...] = src (a file) or
                                       (a after src_ops); the answer is the whole base array.

"rnd" names a dtype: float32, float16, bfloat16, tfloat32, float8_e4m3, float8_e4m3fn, float8_e5m2 (values
answered as float32; float→narrow rounding is round-to-nearest-even, written here with plain NumPy
bit operations and frexp, not with any library), or an integer type / bool (NumPy astype, i.e.
wrap-around — except that a float source is converted the engines' way: truncate, saturate,
NaN → 0).
"""
import json
import math
import os
import sys

import numpy as np

np.seterr(all="ignore")

INT_TYPES = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
}

# ---- rounding into narrow float formats ------------------------------------------------------


def round_bf16(x):
    """float32 -> bfloat16 values (as float32), round to nearest even, by integer bit operations."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    lsb = (bits >> np.uint64(16)) & np.uint64(1)
    rounded = (bits + np.uint64(0x7FFF) + lsb) & np.uint64(0xFFFF0000)
    out = (rounded & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32)


def round_small_float(x, man_bits, emin, max_finite, has_inf, saturate=False):
    """float32 -> a narrow binary float format (values as float32), RNE, subnormals kept.

    A value rounding beyond max_finite becomes +-inf (has_inf) or NaN; saturate clamps instead.
    """
    x64 = np.asarray(x, dtype=np.float32).astype(np.float64)
    ax = np.abs(x64)
    finite = np.isfinite(ax)
    safe = np.where(finite, ax, 1.0)
    _, e = np.frexp(safe)                 # safe = m * 2**e, m in [0.5, 1)
    e = np.maximum(e - 1, emin)           # exponent of the leading bit, or emin for subnormals
    quantum = np.ldexp(1.0, e - man_bits)
    r = np.round(safe / quantum) * quantum  # np.round: half to even; the division is exact
    over = r > max_finite
    if saturate:
        r = np.where(over, max_finite, r)
    else:
        r = np.where(over, np.inf if has_inf else np.nan, r)
    inf_val = max_finite if saturate else (np.inf if has_inf else np.nan)
    r = np.where(np.isinf(ax), inf_val, r)
    r = np.where(ax == 0, 0.0, r)
    r = np.copysign(r, x64)
    r = np.where(np.isnan(x64), np.nan, r)
    return r.astype(np.float32)


def engine_float_to_int(x, dtype):
    """float -> integer the way the engines convert: truncate toward zero, saturate, NaN -> 0."""
    info = np.iinfo(dtype)
    x = np.asarray(x, dtype=np.float64)
    t = np.trunc(np.where(np.isnan(x), 0.0, x))
    return np.clip(t, info.min, info.max).astype(dtype)


def to_rnd(r, rnd):
    """Rounds / wraps an array into the dtype named rnd (see the module comment)."""
    if rnd is None:
        return r
    r = np.asarray(r)
    if rnd == "float32":
        return r.astype(np.float32)
    if rnd == "float16":
        return r.astype(np.float32).astype(np.float16)
    if rnd == "bfloat16":
        return round_bf16(r.astype(np.float32))
    if rnd == "tfloat32":  # float32's exponent range, 10 mantissa bits
        return round_small_float(r.astype(np.float32), 10, -126, float((2 - 2.0**-10) * 2.0**127), True)
    if rnd == "float8_e4m3":
        return round_small_float(r.astype(np.float32), 3, -6, 240.0, True)
    if rnd == "float8_e4m3fn":
        return round_small_float(r.astype(np.float32), 3, -6, 448.0, False)
    if rnd == "float8_e5m2":
        return round_small_float(r.astype(np.float32), 2, -14, 57344.0, True)
    if rnd == "bool":
        return r.astype(np.bool_)
    if rnd in INT_TYPES:
        if r.dtype.kind == "f":
            return engine_float_to_int(r, INT_TYPES[rnd])
        return r.astype(np.int64).astype(INT_TYPES[rnd])  # two's complement wrap
    raise ValueError("unknown rnd " + rnd)


# ---- operations ------------------------------------------------------------------------------

def _abs_extreme(f, a, b):
    """max/min of |a| and |b|. Integers take their magnitudes in int64 (|-128| is 128, as nki-agent's
    integer kernel computes it) and wrap into the promoted type; NumPy's own abs would wrap first."""
    a, b = np.asarray(a), np.asarray(b)
    t = np.result_type(a, b)
    if t.kind in "iu":
        return f(np.abs(a.astype(np.int64)), np.abs(b.astype(np.int64))).astype(t)
    return f(np.abs(a), np.abs(b))


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
    "floor_divide": np.floor_divide, "mod": np.remainder, "fmod": np.fmod, "power": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "abs_max": lambda a, b: _abs_extreme(np.maximum, a, b),
    "abs_min": lambda a, b: _abs_extreme(np.minimum, a, b),
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift, "right_shift": np.right_shift,
}

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)


def erf64(x):
    return _erf(x).astype(np.float64)


def erfc64(x):
    return _erfc(x).astype(np.float64)


def relu(x):
    return np.where(np.isnan(x), x, np.maximum(x, np.zeros((), x.dtype)))


def _zero_at_neg_inf(x, f):
    with np.errstate(invalid="ignore", over="ignore"):
        y = f(x)
    return np.where(np.isneginf(x), 0.0, y)


def _silu_dx(x):
    with np.errstate(over="ignore", invalid="ignore"):
        s = 1.0 / (1.0 + np.exp(-x))
        y = s * (1.0 + x * (1.0 - s))
    return np.where(np.isneginf(x), 0.0, np.where(np.isposinf(x), 1.0, y))


# Formulas for the float64 reference of each unary op.
UNARY_F64 = {
    "negative": np.negative, "abs": np.abs, "sign": np.sign, "square": np.square,
    "reciprocal": lambda x: 1.0 / x, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "arctan": np.arctan, "erf": erf64,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "relu": relu,
    # x * (a factor that reaches 0): the limit at -inf is 0, where the formula gives -inf * 0 = NaN.
    "gelu": lambda x: _zero_at_neg_inf(x, lambda v: 0.5 * v * erfc64(-v / math.sqrt(2.0))),
    "gelu_tanh": lambda x: _zero_at_neg_inf(
        x, lambda v: 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3)))),
    "gelu_sigmoid": lambda x: _zero_at_neg_inf(x, lambda v: v / (1.0 + np.exp(-1.702 * v))),
    "silu": lambda x: _zero_at_neg_inf(x, lambda v: v / (1.0 + np.exp(-v))),
    "softplus": lambda x: np.logaddexp(0.0, x),
    "mish": lambda x: _zero_at_neg_inf(x, lambda v: v * np.tanh(np.logaddexp(0.0, v))),
    "gelu_dx": lambda x: np.where(np.isneginf(x), 0.0, np.where(np.isposinf(x), 1.0, 0.5 * erfc64(-x / math.sqrt(2.0))
                                  + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))),
    "silu_dx": lambda x: _silu_dx(x),
    "erf_dx": lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint,
    "logical_not": np.logical_not,
}

# NumPy's own ufunc in the operand's dtype (floats and the ops that keep integers).
UNARY_NATIVE = {
    "negative": np.negative, "abs": np.abs, "sign": np.sign, "square": np.square,
    "reciprocal": np.reciprocal, "sqrt": np.sqrt, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "rint": np.rint, "relu": relu, "logical_not": np.logical_not,
    "invert": np.invert, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "arctan": np.arctan,
}

REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean,
          "all": np.all, "any": np.any}


def apply_chain(x, ops):
    """Applies a list of view operations, spelled as in the C++ tests, to the array x."""
    for op in ops:
        name = op[0]
        if name == "slice":
            _, axis, start, stop, step = op
            idx = [slice(None)] * x.ndim
            idx[axis % x.ndim] = slice(start, stop, step)
            x = x[tuple(idx)]
        elif name == "select":
            _, axis, i = op
            idx = [slice(None)] * x.ndim
            idx[axis % x.ndim] = i
            x = x[tuple(idx) + (Ellipsis,)]  # the Ellipsis keeps a 0-d result a view, not a scalar
        elif name == "transpose":
            x = np.transpose(x, op[1])  # op[1] None reverses the axes
        elif name == "swapaxes":
            x = np.swapaxes(x, op[1], op[2])
        elif name == "expand_dims":
            x = np.expand_dims(x, op[1])
        elif name == "squeeze":
            x = np.squeeze(x, axis=op[1])
        elif name == "broadcast_to":
            x = np.broadcast_to(x, tuple(op[1]))
        elif name == "reshape":
            x = np.reshape(x, tuple(op[1]))
        elif name == "copy":
            x = x.copy()
        else:
            raise ValueError("unknown view op " + name)
    return x


_loaded = {}


def load(d, name):
    """Loads an input once (many cases share one); callers must not modify the array."""
    if name not in _loaded:
        a = np.load(os.path.join(d, name))
        a.flags.writeable = False
        _loaded[name] = a
    return _loaded[name]


def run_case(d, c):
    kind = c["kind"]
    meta = {}
    if kind == "binary":
        a, b = load(d, c["a"]), load(d, c["b"])
        f = BINARY[c["op"]]
        mode = c.get("mode", "native")
        if mode == "f32":
            r = f(a.astype(np.float32), b.astype(np.float32))
        elif mode == "i64":
            r = f(a.astype(np.int64), b.astype(np.int64))
        else:
            # 0-d operands as 1-element arrays: NumPy 1.24 treats 0-d arrays like Python scalars
            # in promotion (value-based casting), the library treats them as tensors of their type.
            shape = np.broadcast_shapes(a.shape, b.shape)
            r = f(np.atleast_1d(a), np.atleast_1d(b)).reshape(shape)
        meta["numpy_dtype"] = str(r.dtype)
        r = to_rnd(r, c.get("rnd"))
    elif kind == "unary":
        a = load(d, c["a"])
        mode = c.get("mode", "native")
        if mode == "f64":
            r = UNARY_F64[c["op"]](a.astype(np.float64))
        elif mode == "i64":
            r = UNARY_F64[c["op"]](a.astype(np.int64)) if c["op"] != "invert" else np.invert(a.astype(np.int64))
        else:
            r = UNARY_NATIVE[c["op"]](a)
        r = to_rnd(r, c.get("rnd"))
    elif kind == "reduce":
        a = load(d, c["a"])
        axes = tuple(c["axes"]) if c["axes"] else None
        mode = c.get("mode", "f64")
        x = a.astype(np.float64) if mode == "f64" else a.astype(np.int64)
        if c["op"] in ("max", "min") and mode != "f64":
            x = a
        if x.size == 0 and c["op"] in ("max", "min"):
            raise ValueError("empty max/min")
        r = REDUCE[c["op"]](x, axis=axes, keepdims=c["keepdims"])
        r = to_rnd(np.asarray(r), c.get("rnd"))
    elif kind == "arg":
        a = load(d, c["a"])
        f = np.argmax if c["op"] == "argmax" else np.argmin
        r = f(a, axis=c["axis"], keepdims=c["keepdims"]).astype(np.int32)
    elif kind == "matmul":
        a, b = load(d, c["a"]), load(d, c["b"])
        if c.get("mode", "f64") == "i64":
            r = to_rnd(np.matmul(a.astype(np.int64), b.astype(np.int64)), c.get("rnd"))
        else:
            A, B = a.astype(np.float64), b.astype(np.float64)
            ref = np.matmul(A, B)
            if c.get("rnd"):
                ref = to_rnd(ref, c["rnd"]).astype(np.float64)
            r = np.stack([ref, np.matmul(np.abs(A), np.abs(B))])
    elif kind == "round":
        r = to_rnd(load(d, c["a"]).astype(np.float32), c["rnd"]).astype(np.float32)
    elif kind == "astype":
        a = load(d, c["a"])
        rnd = c["rnd"]
        r = a.astype(INT_TYPES[rnd]) if rnd in INT_TYPES else to_rnd(a, rnd)
    elif kind == "broadcast":
        s = np.broadcast_shapes(*[tuple(x) for x in c["shapes"]])
        meta["shape"] = list(s)
        return meta, None
    elif kind == "result_type":
        meta["types"] = [str(np.result_type(np.dtype(p[0]), np.dtype(p[1]))) for p in c["pairs"]]
        return meta, None
    elif kind == "view":
        a = load(d, c["a"])
        v = apply_chain(a, c["ops"])
        meta["shares"] = bool(np.shares_memory(v, a))
        meta["c_contiguous"] = bool(v.flags.c_contiguous)
        meta["strides"] = [s // v.itemsize for s in v.strides]
        meta["offset"] = (v.__array_interface__["data"][0] - a.__array_interface__["data"][0]) // v.itemsize
        r = v
    elif kind == "slice_table":
        # Python's own slicing of range(n) for each (start, stop, step); None as null.
        meta["indices"] = [list(range(c["n"]))[slice(*t)] for t in c["slices"]]
        return meta, None
    elif kind == "assign":
        base = load(d, c["a"]).copy()
        dst = apply_chain(base, c["dst_ops"])
        src = load(d, c["src"]) if "src" in c else apply_chain(base, c["src_ops"])
        dst[...] = src
        r = base
    else:
        raise ValueError("unknown kind " + kind)
    r = np.array(r, order="C")  # (np.ascontiguousarray would turn 0-d into 1-d)
    meta["dtype"] = str(r.dtype)
    meta["shape"] = list(r.shape)
    return meta, r


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "cases.json")) as f:
        cases = json.load(f)
    results = {}
    for c in cases:
        cid = str(c["id"])
        try:
            meta, r = run_case(d, c)
            if r is not None:
                np.save(os.path.join(d, "r" + cid + ".npy"), r)
        except Exception as e:  # an answer of its own: the C++ side decides whether it expected it
            meta = {"error": "%s: %s" % (type(e).__name__, e)}
        results[cid] = meta
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f)
    print("oracle: %d cases" % len(cases))


if __name__ == "__main__":
    main()
