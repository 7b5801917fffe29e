"""NumPy references of the op-versus-reference harness (tests/unit/test_ops_reference.cpp).

Usage: ops_reference.py MANIFEST OUT_DIR

MANIFEST holds one JSON object per line, one per reference:
  {"key": "r17", "op": "binary", "p": {...}, "in": ["/tmp/.../r17_a.npy", ...],
   "in_dtypes": ["bfloat16", ...], "outs": ["float32", ...]}
The inputs are .npy files holding the exact input values (bfloat16 and float8 values as float32,
integers as integers). For every key this writes OUT_DIR/<key>.bin: for each output, an int64
element count n and int64 flags, then the n expected values (already rounded into the output's
dtype; float64 when flags & 1 (int32 / uint32 outputs), else float32, which holds every other
output type exactly), then, when flags & 2, n float64 error bounds (extra absolute slack the
comparison grants that element on top of the per-dtype tolerance: the accumulation error of a
float32 sum or matmul; 0 when absent). A
reference that raises writes OUT_DIR/<key>.err with the traceback instead. Prints "ok <count>".

How the numbers are made (what "the hardware" means here, from the NKI docs, nki-spec §3.9, §4
and Appendix A):
- The math runs in float64 on the exact input values. The engines compute in float32 and round
  once into the destination type, so each engine result is first rounded to float32 (RNE,
  overflow to inf), then into the destination (RNE for the narrow floats; float8_e4m3 and e5m2
  overflow to inf as ml_dtypes and nki.simulate do). For add/subtract/multiply/divide a float64
  result rounded to float32 is exactly the IEEE float32 result.
- Where an instruction does two steps in one pass (tensor_scalar with op0 and op1,
  scalar_tensor_tensor, activation's data*scale+bias), the intermediate is a float32 value: it is
  rounded to float32, never to the destination type.
- Float to integer (a float result written to an int tile): not documented by AWS. We follow
  docs/dtypes.md: truncate toward zero, saturate at the type's range, NaN -> 0. Integer
  arithmetic on int32/uint32 tiles alone runs on GpSimd in native integer arithmetic (the
  tensor_tensor doc) and wraps in two's complement; other integer tiles go through float32.
- Bitvec operators work on the bit patterns; right_shift is the logical shift (the operator table
  lists "Arithmetic Shift Right: not supported", "Logical Shift Right: nl.right_shift").
- NaN semantics where the docs say nothing (maximum/minimum with NaN, x/0, comparisons with NaN,
  logical ops on NaN): NumPy's on float32 values.
- Activation functions are evaluated exactly (float64) and rounded; the harness's tolerance covers
  the simulator's float32 libm. Limits at infinity are the mathematical ones (gelu(-inf) = 0).
- Accumulations (tensor_reduce add/multiply, tensor_partition_reduce add, nl.sum/mean/prod,
  nc_matmul, bn_stats/bn_aggr, activation_reduce) are exact, with a bound of (n + 2) * 2^-24 * (sum of the magnitudes of the
  terms): the worst case of a float32 accumulation in any order.
- Selections, searches and gathers (max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle,
  range_select, select_reduce, tensor_copy_predicated, nl.gather_flattened, local_gather,
  dma_transpose, sequence_bounds) follow the docs' definitions (nki-spec §4.4, §4.5, Appendix A and
  the NumPy equivalents of the AWS docs); where values repeat, the rule each reference uses is in its
  docstring.
"""
import json
import math
import os
import sys
import traceback

import numpy as np

U32 = 2.0 ** -24

# name: (mantissa bits, exponent of the smallest normal, largest finite value)
FLOATS = {
    "float32": (23, -126, float(np.finfo(np.float32).max)),
    "bfloat16": (7, -126, float.fromhex("0x1.fep127")),
    "float16": (10, -14, 65504.0),
    "float8_e4m3": (3, -6, 240.0),
    "float8_e4m3fn": (3, -6, 448.0),
    "float8_e5m2": (2, -14, 57344.0),
}
INTS = {  # name: (bits, signed)
    "int8": (8, True), "int16": (16, True), "int32": (32, True),
    "uint8": (8, False), "uint16": (16, False), "uint32": (32, False),
}


def round_float(x, fmt):
    """x (float64 values) rounded to the float format `fmt`: RNE, subnormals kept, overflow to inf
    (NaN for float8_e4m3fn, which has no inf)."""
    x = np.array(x, dtype=np.float64)
    if fmt == "float32":
        with np.errstate(over="ignore"):
            return x.astype(np.float32).astype(np.float64)
    mbits, emin, maxfin = FLOATS[fmt]
    finite = np.isfinite(x) & (x != 0)
    a = np.abs(x[finite])
    _, e = np.frexp(a)  # a = m * 2**e with m in [0.5, 1)
    q = np.ldexp(1.0, np.maximum(e - 1, emin) - mbits)
    r = np.round(a / q) * q  # a / q is exact: q is a power of two; np.round ties to even
    r = np.where(r > maxfin, np.nan if fmt == "float8_e4m3fn" else np.inf, r)
    x[finite] = np.copysign(r, x[finite])
    if fmt == "float8_e4m3fn":
        x[np.isinf(x)] = np.nan
    return x


def f32(x):
    return round_float(x, "float32")


def to_int(x, dtype):
    """A float value written into an integer type: truncate, saturate, NaN -> 0."""
    bits, signed = INTS[dtype]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0, posinf=hi, neginf=lo)
    return np.clip(np.trunc(x), lo, hi)


def wrap_int(x, dtype):
    """An exact integer wrapped into `dtype` (two's complement)."""
    bits, signed = INTS[dtype]
    x = np.asarray(x, dtype=np.int64) & ((1 << bits) - 1)
    if signed:
        x = np.where(x >= (1 << (bits - 1)), x - (1 << bits), x)
    return x.astype(np.float64)


def store(x, dtype):
    """An engine's float32 result written into `dtype`."""
    x = f32(x)
    if dtype == "float32":
        return x
    if dtype in FLOATS:
        return round_float(x, dtype)
    if dtype == "bool":
        return (x != 0).astype(np.float64)
    return to_int(x, dtype)


def cast(x, src_dtype, dst_dtype):
    """A copy between types: bit-exact when they are equal, else through float32."""
    if src_dtype == dst_dtype:
        return np.asarray(x, dtype=np.float64)
    return store(x, dst_dtype)


# ---- operators ------------------------------------------------------------------------------------

def alu(op, a, b):
    """An arithmetic ALU operator in exact arithmetic (the caller rounds)."""
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "subtract":
            return a - b
        if op == "multiply":
            return a * b
        if op == "divide":
            return a / b
        if op == "maximum":
            return np.maximum(a, b)
        if op == "minimum":
            return np.minimum(a, b)
        if op == "power":
            return np.power(a, b)
        if op == "abs_max":
            return np.maximum(np.abs(a), np.abs(b))
        if op == "abs_min":
            return np.minimum(np.abs(a), np.abs(b))
        if op == "fmod":
            return np.fmod(a, b)  # the sign of the dividend
        if op == "mod":
            return np.mod(a, b)  # the sign of the divisor (Python %)
        cmp = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
               "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal}
        if op in cmp:
            return cmp[op](a, b).astype(np.float64)
        if op == "logical_and":
            return ((a != 0) & (b != 0)).astype(np.float64)
        if op == "logical_or":
            return ((a != 0) | (b != 0)).astype(np.float64)
        if op == "logical_xor":
            return ((a != 0) ^ (b != 0)).astype(np.float64)
    raise ValueError(f"unknown arithmetic operator {op}")


BITVEC = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")


def bitvec(op, a, b, dtype):
    """A bitvec operator on the bit patterns of `dtype`; shifts are logical."""
    bits, _ = INTS[dtype]
    mask = (1 << bits) - 1
    ua = np.asarray(a, dtype=np.int64) & mask
    ub = np.asarray(b, dtype=np.int64) & mask
    if op == "bitwise_and":
        r = ua & ub
    elif op == "bitwise_or":
        r = ua | ub
    elif op == "bitwise_xor":
        r = ua ^ ub
    elif op == "left_shift":
        r = (ua << ub) & mask
    elif op == "right_shift":
        r = ua >> ub
    else:
        raise ValueError(f"unknown bitvec operator {op}")
    return wrap_int(r, dtype)


def int_exact(op, a, b, dtype):
    """int32/uint32 arithmetic on GpSimd: exact, wrapped into the destination."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if op in ("add", "subtract", "multiply"):
        r = {"add": a + b, "subtract": a - b, "multiply": a * b}[op]
        return wrap_int(r, dtype)
    if op in ("maximum", "minimum"):
        return wrap_int(np.maximum(a, b) if op == "maximum" else np.minimum(a, b), dtype)
    return alu(op, a.astype(np.float64), b.astype(np.float64))  # comparisons and logical ops: 1 / 0


def apply_binary(op, a, b, mode, out):
    """One ALU step into `out`: mode 'float' (through float32), 'int' (exact int32) or 'bitvec'."""
    if mode == "bitvec":
        return bitvec(op, a, b, out)
    if mode == "int":
        return int_exact(op, a, b, out)
    return store(alu(op, f32(a), f32(b)), out)  # the engine reads its operands as float32


# ---- activation functions -------------------------------------------------------------------------

SQRT2 = math.sqrt(2.0)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _limits(fn, lo, hi):
    """fn with its limits at -inf and +inf."""
    def g(x):
        with np.errstate(all="ignore"):
            y = fn(x)
        y = np.where(x == -np.inf, lo, y)
        return np.where(x == np.inf, hi, y)
    return g


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _gelu_tanh(x):
    z = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
    return x * _sigmoid(2.0 * z)  # 0.5 x (1 + tanh z) = x / (1 + exp(-2z))


ACT = {
    "copy": lambda x: x,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "reciprocal": lambda x: 1.0 / x,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "relu": lambda x: np.where(np.isnan(x), x, np.maximum(x, 0.0)),
    "gelu": _limits(lambda x: 0.5 * x * (1.0 + _erf(x / SQRT2)), 0.0, np.inf),
    "gelu_apprx_tanh": _limits(_gelu_tanh, 0.0, np.inf),
    "silu": _limits(lambda x: x * _sigmoid(x), 0.0, np.inf),
    "softplus": lambda x: np.logaddexp(0.0, x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arctan": np.arctan,
    "erf": _erf,
    "abs": np.abs,
    "negative": np.negative,
    "sign": np.sign,
    "square": lambda x: x * x,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "rint": np.rint,
    # on the Scalar engine's list, not (yet) in the front end
    "mish": _limits(lambda x: x * np.tanh(np.logaddexp(0.0, x)), 0.0, np.inf),
    "gelu_dx": _limits(lambda x: 0.5 * (1.0 + _erf(x / SQRT2)) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),
                       0.0, 1.0),
    "silu_dx": _limits(lambda x: _sigmoid(x) * (1.0 + x * (1.0 - _sigmoid(x))), 0.0, 1.0),
    "erf_dx": lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x),
    "gelu_apprx_sigmoid": _limits(lambda x: x * _sigmoid(1.702 * x), 0.0, np.inf),
    "logical_not": lambda x: (x == 0).astype(np.float64),
}


def act_argument(x, scale, bias):
    """data * scale + bias as the Scalar engine forms it: float32 steps."""
    arg = f32(x)
    if isinstance(scale, np.ndarray) or scale != 1.0:
        arg = f32(arg * scale)
    if bias is not None:
        arg = f32(arg + bias)
    return arg


def activate(func, arg):
    with np.errstate(all="ignore"):
        return ACT[func](arg)


# ---- references ----------------------------------------------------------------------------------

def bound_sum(terms, axes, n):
    return (n + 2) * U32 * np.sum(np.abs(terms), axis=axes)


def ref_binary(p, ins, dts, outs):
    """tensor_tensor and the nl.* binary ops: tiles (broadcast) or Python numbers (sa, sb)."""
    a = ins[0] if p.get("sa") is None else f32(p["sa"])
    b = ins[-1] if p.get("sb") is None else f32(p["sb"])
    if p.get("view") == "strided":  # the even and the odd columns of one tile
        a, b = ins[0][:, 0::2], ins[0][:, 1::2]
    elif p.get("view") == "halves":  # the two halves of the free axis of one tile
        h = ins[0].shape[1] // 2
        a, b = ins[0][:, :h], ins[0][:, h:]
    r = apply_binary(p["op"], a, b, p.get("mode", "float"), outs[0])
    return [(np.broadcast_to(r, np.broadcast_shapes(np.shape(a), np.shape(b))), None)]


def ref_tensor_scalar(p, ins, dts, outs):
    x = ins[0]
    mode = p.get("mode", "float")
    tiles = iter(ins[1:])

    def operand(v):
        if v == "tile":
            return _per_partition(next(tiles), x.ndim)  # [P, 1]: broadcasts along the free axes
        return v if mode == "bitvec" else f32(v)

    if p["op0"] in UNARY_ALU:  # a unary operator: operand0 is 0 / None
        return [(store(activate(p["op0"], f32(x)), outs[0]), None)]
    o0 = operand(p["operand0"])
    o1 = operand(p["operand1"]) if p.get("op1") else None
    if mode == "bitvec":
        t = bitvec(p["op0"], o0 if p["reverse0"] else x, x if p["reverse0"] else o0, outs[0])
        if p.get("op1"):
            t = bitvec(p["op1"], o1 if p["reverse1"] else t, t if p["reverse1"] else o1, outs[0])
        return [(t, None)]
    x = f32(x)  # the engine reads its operands as float32
    t = f32(alu(p["op0"], o0, x) if p["reverse0"] else alu(p["op0"], x, o0))
    if p.get("op1"):
        t = alu(p["op1"], o1, t) if p["reverse1"] else alu(p["op1"], t, o1)
    return [(store(t, outs[0]), None)]


UNARY_ALU = ("abs", "square", "relu", "rsqrt", "reciprocal")


def ref_stt(p, ins, dts, outs):
    """scalar_tensor_tensor: (data op0 operand0) op1 operand1, the intermediate in float32."""
    x, y = f32(ins[0]), f32(ins[1])
    o0 = _per_partition(ins[2], x.ndim) if p["operand0"] == "tile" else f32(p["operand0"])
    t = f32(alu(p["op0"], o0, x) if p["reverse0"] else alu(p["op0"], x, o0))
    r = alu(p["op1"], y, t) if p["reverse1"] else alu(p["op1"], t, y)
    return [(store(r, outs[0]), None)]


def _per_partition(v, ndim):
    """A [P, 1] tile shaped to broadcast along the free axes of an ndim-D tile; a number as is."""
    if isinstance(v, np.ndarray):
        return v.reshape(v.shape[0], *([1] * (ndim - 1)))
    return v


def ref_activation(p, ins, dts, outs):
    x = ins[0]
    rest = iter(ins[1:])
    bias = _per_partition(next(rest), x.ndim) if p.get("bias") else None
    scale = _per_partition(next(rest), x.ndim) if p.get("scale_tile") else p.get("scale", 1.0)
    if p["func"] == "invert":  # bitwise not of an integer tile
        return [(bitvec("bitwise_xor", x, -1, outs[0]), None)]
    y = activate(p["func"], act_argument(x, scale, bias))
    res = [(store(y, outs[0]), None)]
    if p.get("reduce"):
        v = f32(y)  # the engine reduces its float32 results, before the write into dst
        axes = tuple(range(1, x.ndim))
        with np.errstate(all="ignore"):
            s = np.sum(v, axis=axes).reshape(-1, 1)
        n = int(np.prod(x.shape[1:]))
        res.append((store(s, outs[1]), bound_sum(v, axes, n).reshape(-1, 1)))
    return res


def ref_reduce(p, ins, dts, outs):
    x = f32(ins[0])
    axes = tuple(p["axes"])
    n = int(np.prod([x.shape[a] for a in axes]))
    op = p["op"]
    with np.errstate(all="ignore"):
        if op == "add":
            r, bnd = np.sum(x, axis=axes), bound_sum(x, axes, n)
        elif op == "multiply":
            r = np.prod(x, axis=axes)
            bnd = 2 * (n + 2) * U32 * np.abs(r)
        elif op == "maximum":
            r, bnd = np.max(x, axis=axes), None
        elif op == "minimum":
            r, bnd = np.min(x, axis=axes), None
        elif op == "var":  # population variance
            mean = np.mean(x, axis=axes, keepdims=True)
            r = np.mean((x - mean) ** 2, axis=axes)
            bnd = (2 * n + 4) * U32 * np.mean(x ** 2, axis=axes)
        elif op == "all":
            r, bnd = np.all(x != 0, axis=axes).astype(np.float64), None
        elif op == "mean":
            r = np.sum(x, axis=axes) / n
            bnd = bound_sum(x, axes, n) / n + 2 * U32 * np.abs(r)
        else:
            raise ValueError(f"unknown reduction {op}")
    if p.get("negate"):
        r = -r
    shape = [1 if (i in axes) else d for i, d in enumerate(x.shape) if p.get("keepdims") or i not in axes]
    if len(shape) == 1:
        shape.append(1)
    r = np.reshape(r, shape)
    if bnd is not None:
        bnd = np.reshape(bnd, shape)
    return [(store(r, outs[0]), bnd)]


def ref_matmul(p, ins, dts, outs):
    """nc_matmul groups: (stationary, moving, mode) with mode over / acc / auto; or nl.matmul."""
    acc = bnd = None
    k_total = 0
    for i, mode in enumerate(p["modes"]):
        s, m = f32(ins[2 * i]), f32(ins[2 * i + 1])
        if p.get("double_row"):  # [128, 2, free]: K = 256 over the partitions and the size-2 axis
            s, m = s.reshape(-1, s.shape[-1]), m.reshape(-1, m.shape[-1])
        if p.get("nl") and not p.get("transpose_x"):
            s = s.T  # nl.matmul(x, y): x @ y
        prod, mag = s.T @ m, np.abs(s.T) @ np.abs(m)
        if mode == "over" or acc is None:
            acc, bnd, k_total = prod, mag, s.shape[0]
        else:
            acc, bnd, k_total = acc + prod, bnd + mag, k_total + s.shape[0]
    return [(store(acc, outs[0]), (k_total + 2 * len(p["modes"]) + 2) * U32 * bnd)]


def ref_transpose(p, ins, dts, outs):
    x = ins[0]
    return [(cast(x.reshape(x.shape[0], -1).T, dts[0], outs[0]), None)]


def ref_copy(p, ins, dts, outs):
    """tensor_copy, dma_copy, nl.load / nl.store, nl.copy: an optional NumPy index, then the cast."""
    x = ins[0]
    if p.get("interleave"):  # two tiles written to the even and the odd columns of the output
        x = np.stack([ins[0], ins[1]], axis=-1).reshape(ins[0].shape[0], -1)
    if p.get("index"):
        x = eval("x" + p["index"], {"x": x, "np": np})  # our own index strings, e.g. "[:, ::2]"
    if p.get("reshape"):
        x = x.reshape(p["reshape"])
    src = dts[0]
    if p.get("mid"):  # nl.load(dtype=mid) then nl.store into outs[0]: two casts
        x, src = cast(x, src, p["mid"]), p["mid"]
    return [(cast(x, src, outs[0]), None)]


def affine_values(p, shape):
    """offset + partition * channel_multiplier + sum of step_i * index_i over the free axes."""
    grids = np.indices(shape, dtype=np.int64)
    v = p["offset"] + grids[0] * p["channel_multiplier"]
    for axis, step in enumerate(p["steps"], start=1):
        v = v + grids[axis] * step
    return wrap_int(v, "int32")  # int32 arithmetic


def ref_iota(p, ins, dts, outs):
    v = affine_values(p, p["shape"])
    return [(v if outs[0] == "int32" else store(v, outs[0]), None)]


def ref_affine_select(p, ins, dts, outs):
    t = ins[0]
    v = affine_values(p, t.shape)
    pred = alu(p["cmp"], v, 0.0) != 0
    on_false = store(f32(p["on_false"]), outs[0])
    return [(np.where(pred, cast(t, dts[0], outs[0]), on_false), None)]


def ref_memset(p, ins, dts, outs):
    v = p["value"]
    if outs[0] in INTS and float(v).is_integer():
        r = np.full(p["shape"], float(v))  # an integer constant into an integer tile: exact
    else:
        r = np.full(p["shape"], store(v, outs[0]))
    return [(r, None)]


def ref_scan(p, ins, dts, outs):
    d0, d1 = f32(ins[0]), f32(ins[1])
    P = d0.shape[0]
    d0, d1 = d0.reshape(P, -1), d1.reshape(P, -1)
    prev = f32(ins[2].reshape(P)) if p["initial"] == "tile" else np.full(P, f32(p["initial"]))
    out = np.empty_like(d0)
    for j in range(d0.shape[1]):
        t = f32(alu(p["op0"], prev, d0[:, j]) if p["reverse0"] else alu(p["op0"], d0[:, j], prev))
        prev = f32(alu(p["op1"], d1[:, j], t) if p["reverse1"] else alu(p["op1"], t, d1[:, j]))
        out[:, j] = prev
    return [(store(out.reshape(ins[0].shape), outs[0]), None)]


CUMULATIVE_START = {"add": 0.0, "subtract": 0.0, "multiply": 1.0, "maximum": -np.inf, "minimum": np.inf}


def ref_cumulative(p, ins, dts, outs):
    """tensor_scalar_cumulative as AWS's pseudocode states it: reg = op1(src op0 imm0, reg) per
    partition, from op1's identity or the [P, 1] init tile; float32 at each step."""
    x = f32(ins[0])
    P = x.shape[0]
    x = x.reshape(P, -1)
    reg = f32(ins[1].reshape(P)) if p["load"] else np.full(P, CUMULATIVE_START[p["op1"]])
    out = np.empty_like(x)
    for j in range(x.shape[1]):
        reg = f32(alu(p["op1"], f32(alu(p["op0"], x[:, j], f32(p["imm0"]))), reg))
        out[:, j] = reg
    return [(store(out.reshape(ins[0].shape), outs[0]), None)]


def _stats(x):
    """(count, mean, M2, bound of mean, bound of M2) per partition of x[P, n]."""
    n = x.shape[1]
    if n == 0:
        z = np.zeros(x.shape[0])
        return z, z, z, z, z
    mean = x.mean(axis=1)
    m2 = ((x - mean[:, None]) ** 2).sum(axis=1)
    bmean = (n + 2) * U32 * np.abs(x).mean(axis=1)
    bm2 = (2 * n + 4) * U32 * (x ** 2).sum(axis=1)
    return np.full(x.shape[0], float(n)), mean, m2, bmean, bm2


def ref_bn_stats(p, ins, dts, outs):
    x = f32(ins[0].reshape(ins[0].shape[0], -1))
    ce, me, ve, bme, bve = _stats(x[:, 0::2])
    co, mo, vo, bmo, bvo = _stats(x[:, 1::2])
    z = np.zeros_like(ce)
    vals = np.stack([ce, me, ve, co, mo, vo], axis=1)
    bnds = np.stack([z, bme, bve, z, bmo, bvo], axis=1)
    return [(store(vals, outs[0]), bnds)]


def ref_bn_aggr(p, ins, dts, outs):
    x = f32(ins[0].reshape(ins[0].shape[0], -1))
    n = x.shape[1]
    _, mean, m2, bmean, bm2 = _stats(x)
    vals = np.stack([mean, m2 / n], axis=1)
    bnds = np.stack([bmean, bm2 / n], axis=1)
    return [(store(vals, outs[0]), bnds)]


def ref_where(p, ins, dts, outs):
    """nl.where(condition, x, y): x where the condition is nonzero, else y, cast into outs[0]."""
    c, x, y = ins
    return [(np.where(c != 0, cast(x, dts[1], outs[0]), cast(y, dts[2], outs[0])), None)]


def ref_softmax(p, ins, dts, outs):
    x = ins[0]
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=1, keepdims=True))
        return [(store(e / np.sum(e, axis=1, keepdims=True), outs[0]), None)]


# ---- search, selection, gathers --------------------------------------------------------------------

def _rows(x):
    """x as [P, elements per partition]."""
    return x.reshape(x.shape[0], -1)


def ref_max8(p, ins, dts, outs):
    """The 8 largest values of each partition, descending (read as float32; repeats repeat)."""
    x = _rows(f32(ins[0]))
    return [(store(-np.sort(-x, axis=1)[:, :8], outs[0]), None)]


def _search_vals(p, x, distinct=True):
    """The eight columns (start, step) the kernels copy into the vals tile."""
    start, step = p["cols"]
    v = x[:, start:start + 8 * step:step]
    if v.shape[1] != 8:
        raise ValueError(f"cols {p['cols']} do not name 8 columns of {x.shape}")
    if distinct:
        for row in range(v.shape[0]):
            if len(set(v[row].tolist())) != 8:
                raise ValueError(f"partition {row}: vals {v[row]} repeat (ambiguous): change the input")
    return v


def ref_find_index8(p, ins, dts, outs):
    """The index of the first occurrence of each of the 8 vals in each partition; a value the
    partition does not hold gets the all-ones sentinel of the output type. With "absent" the kernel
    writes that number over the last of the vals. With "dup" the vals repeat, and a repeated value
    pairs with its successive occurrences in ascending order across the columns (nc_match_replace8's
    docs describe find_index8 so: the opposite of its own reverse order)."""
    x = _rows(f32(ins[0]))
    v = _search_vals(p, x, distinct=not p.get("dup")).copy()
    if p.get("absent") is not None:
        v[:, 7] = store(p["absent"], dts[0])
    bits, _ = INTS[outs[0]]
    idx = np.empty(v.shape)
    for row in range(x.shape[0]):
        found = np.zeros(x.shape[1], dtype=bool)
        for j in range(8):
            at = np.flatnonzero((x[row] == v[row, j]) & ~found)
            if at.size:
                found[at[0]] = True
            idx[row, j] = at[0] if at.size else 2 ** bits - 1
    return [(idx, None)]


def ref_match_replace8(p, ins, dts, outs):
    """Each val's first occurrence not already matched replaced by imm; its index per val. The vals
    are matched from the last to the first (the docs' rule for repeated vals)."""
    x = _rows(ins[0])
    v = _search_vals(p, f32(x), distinct=not p.get("dup"))
    res = cast(x, dts[0], outs[0]).copy()
    imm = store(p["imm"], outs[0])
    idx = np.empty(v.shape)
    for row in range(x.shape[0]):
        taken = np.zeros(x.shape[1], dtype=bool)
        for j in range(7, -1, -1):
            at = np.flatnonzero((f32(x[row]) == v[row, j]) & ~taken)[0]
            taken[at] = True
            idx[row, j] = at
        res[row, taken] = imm
    out = [(res.reshape(ins[0].shape), None)]
    if len(outs) > 1:
        out.append((store(idx, outs[1]) if outs[1] not in INTS else idx, None))
    return out


def ref_stream_shuffle(p, ins, dts, outs):
    """Per 32-partition quadrant q: dst[32q + i] = src[32q + mask[i]], unless mask[i] is 255."""
    dst = (ins[0] if p.get("inplace") else ins[1]).copy()
    src = ins[0] if p.get("src_rows") is None else ins[0][:int(p["src_rows"])]
    mask = p["mask"]
    for q in range((dst.shape[0] + 31) // 32):
        for i, m in enumerate(mask):
            if m != 255 and 32 * q + i < dst.shape[0]:
                dst[32 * q + i] = src[32 * q + m]
    return [(cast(dst, dts[0], outs[0]), None)]


FP32_MIN = -float(np.finfo(np.float32).max)
CMP = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
       "less": np.less, "less_equal": np.less_equal}


def ref_range_select(p, ins, dts, outs):
    """idx = range_start + free index (float32); on_true where op0(idx, bound0) & op1(idx, bound1),
    else float32 min; reduce_res the row maximum of that float32 selection."""
    x = _rows(f32(ins[0]))
    b0, b1 = f32(ins[1]).reshape(-1, 1), f32(ins[2]).reshape(-1, 1)
    idx = f32(p["range_start"] + np.arange(x.shape[1], dtype=np.float64))[None, :]
    keep = CMP[p["op0"]](idx, b0) & CMP[p["op1"]](idx, b1)
    sel = np.where(keep, x, FP32_MIN)
    out = [(store(sel, outs[0]).reshape(ins[0].shape), None)]
    if p.get("reduce"):
        out.append((store(sel.max(axis=1, keepdims=True), outs[1]), None))
    return out


def ref_select_reduce(p, ins, dts, outs):
    """on_true where the predicate is non-zero (zero with reverse), else on_false; the row maximum."""
    pred, x = ins[0], f32(ins[1])
    on_false = _per_partition(f32(ins[2]), x.ndim) if p.get("on_false") is None else f32(p["on_false"])
    keep = (pred != 0) != bool(p.get("reverse"))
    sel = np.where(keep, x, on_false)
    out = [(store(sel, outs[0]), None)]
    if p.get("reduce"):
        out.append((store(_rows(sel).max(axis=1, keepdims=True), outs[1]), None))
    return out


def ref_copy_predicated(p, ins, dts, outs):
    """dst = src where the predicate is non-zero (zero with reverse); elsewhere dst as it was."""
    pred, dst = ins[0], ins[1]
    src = ins[2] if p.get("value") is None else store(p["value"], outs[0])
    keep = (pred != 0) != bool(p.get("reverse"))
    return [(np.where(keep, src, dst), None)]


def ref_partition_reduce(p, ins, dts, outs):
    """The reduction over the partition axis: [P, ...] -> [1, ...]."""
    x, op = ins[0], p["op"]
    if op in ("bitwise_or", "bitwise_and"):
        bits, _ = INTS[dts[0]]
        u = np.asarray(x, dtype=np.int64) & ((1 << bits) - 1)
        r = (np.bitwise_or if op == "bitwise_or" else np.bitwise_and).reduce(u, axis=0, keepdims=True)
        return [(wrap_int(r, outs[0]), None)]
    x = f32(x)
    if op == "add":
        return [(store(np.sum(x, axis=0, keepdims=True), outs[0]),
                 bound_sum(x, 0, x.shape[0]).reshape((1,) + x.shape[1:]))]
    if op == "maximum":
        return [(store(np.max(x, axis=0, keepdims=True), outs[0]), None)]
    raise ValueError(f"unknown partition reduction {op}")


def ref_gather_flattened(p, ins, dts, outs):
    """out[p, ...] = data[p].flatten()[indices[p].flatten()], in the indices' shape."""
    data, idx = ins
    got = np.take_along_axis(_rows(data), _rows(idx).astype(np.int64), axis=1)
    return [(cast(got.reshape(idx.shape), dts[0], outs[0]), None)]


def ref_local_gather(p, ins, dts, outs):
    """Per 16-partition group: its indices flattened partition first (Fortran order), the first n
    kept; each the element offset index * k of k contiguous elements gathered from every partition
    of the group -> [P, n, k]."""
    src, index = _rows(ins[0]), ins[1]
    k = int(p["k"])
    P = src.shape[0]
    n = int(p["n"]) if p.get("n") is not None else 16 * index.shape[1]
    out = np.empty((P, n, k))
    for g in range(P // 16):
        rows = slice(16 * g, 16 * (g + 1))
        offsets = (index[rows].ravel(order="F")[:n] * k).astype(np.int64)
        for j, at in enumerate(offsets):
            out[rows, j, :] = src[rows, at:at + k]
    return [(cast(out, dts[0], outs[0]), None)]


DMA_TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def ref_dma_transpose(p, ins, dts, outs):
    x = ins[0]
    return [(cast(np.transpose(x, DMA_TRANSPOSE_AXES[x.ndim]), dts[0], outs[0]), None)]


def ref_sequence_bounds(p, ins, dts, outs):
    """[1, F] segment ids -> [1, 2, F]: each element's run of equal ids, its first index and one past
    its last; padding (id 0) gets F and -1."""
    ids = ins[0].reshape(-1)
    n = ids.size
    bounds = np.empty((2, n))
    for i in range(n):
        if ids[i] == 0:
            bounds[:, i] = (n, -1)
            continue
        lo, hi = i, i + 1
        while lo > 0 and ids[lo - 1] == ids[i]:
            lo -= 1
        while hi < n and ids[hi] == ids[i]:
            hi += 1
        bounds[:, i] = (lo, hi)
    return [(bounds.reshape(1, 2, n), None)]


REFS = {
    "where": ref_where, "softmax": ref_softmax,
    "binary": ref_binary, "tensor_scalar": ref_tensor_scalar, "stt": ref_stt, "activation": ref_activation,
    "reduce": ref_reduce, "matmul": ref_matmul, "transpose": ref_transpose, "copy": ref_copy,
    "iota": ref_iota, "affine_select": ref_affine_select, "memset": ref_memset, "scan": ref_scan,
    "bn_stats": ref_bn_stats, "bn_aggr": ref_bn_aggr,
    "max8": ref_max8, "find_index8": ref_find_index8, "match_replace8": ref_match_replace8,
    "stream_shuffle": ref_stream_shuffle, "range_select": ref_range_select, "select_reduce": ref_select_reduce,
    "copy_predicated": ref_copy_predicated, "partition_reduce": ref_partition_reduce,
    "gather_flattened": ref_gather_flattened, "local_gather": ref_local_gather, "dma_transpose": ref_dma_transpose,
    "sequence_bounds": ref_sequence_bounds, "cumulative": ref_cumulative,
}


def self_check():
    """The generic rounding agrees with NumPy's float16 and with known bfloat16 / float8 values."""
    xs = np.array([0.1, -1.5, 65504.0, 65519.99, 65520.0, 1e-7, 6e-8, 2.0 ** -25, 3.0 * 2 ** -26, 1e30, -0.0])
    with np.errstate(over="ignore"):
        want = xs.astype(np.float32).astype(np.float16).astype(np.float64)
    got = round_float(f32(xs), "float16")
    assert np.array_equal(got, want) or np.allclose(got, want, rtol=0, atol=0), (got, want)
    assert round_float([1.00390625], "bfloat16")[0] == 1.0  # a tie: to even
    assert round_float([1.01171875], "bfloat16")[0] == 1.015625  # a tie: to even (up)
    assert round_float([248.0], "float8_e4m3")[0] == np.inf and round_float([247.0], "float8_e4m3")[0] == 240.0
    assert round_float([61440.0], "float8_e5m2")[0] == np.inf
    assert round_float([2.0 ** -9], "float8_e4m3")[0] == 2.0 ** -9  # the smallest subnormal


def main():
    manifest, out_dir = sys.argv[1], sys.argv[2]
    self_check()
    count = 0
    with open(manifest, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    for case in lines:
        key = case["key"]
        try:
            ins = [np.load(path).astype(np.float64) for path in case["in"]]
            results = REFS[case["op"]](case["p"], ins, case["in_dtypes"], case["outs"])
            if len(results) != len(case["outs"]):
                raise ValueError(f"{len(results)} results for {len(case['outs'])} outputs")
            with open(os.path.join(out_dir, key + ".bin.tmp"), "wb") as out:
                for (vals, bnd), dtype in zip(results, case["outs"]):
                    vals = np.asarray(vals, dtype=np.float64)
                    wide = dtype in ("int32", "uint32")  # every other output type fits float32 exactly
                    has_bound = bnd is not None and bool(np.any(np.asarray(bnd) != 0))
                    np.array([vals.size, (1 if wide else 0) | (2 if has_bound else 0)], dtype="<i8").tofile(out)
                    vals.ravel().astype("<f8" if wide else "<f4").tofile(out)
                    if has_bound:
                        np.broadcast_to(np.asarray(bnd, dtype=np.float64), vals.shape).ravel().astype("<f8").tofile(out)
            os.replace(os.path.join(out_dir, key + ".bin.tmp"), os.path.join(out_dir, key + ".bin"))
        except Exception:  # noqa: BLE001 - reported per case by the harness
            with open(os.path.join(out_dir, key + ".err"), "w", encoding="utf-8") as out:
                out.write(traceback.format_exc())
        count += 1
    print("ok", count)


if __name__ == "__main__":
    main()
