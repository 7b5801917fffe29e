// nkia-label: slow (about 1000 cases: ~10 s as one process, ~0.17 s each under ctest)
//
// The op-versus-reference harness, in the spirit of ggml's test-backend-ops: every nki.isa
// instruction and nl.* operation the simulator implements, run on seeded adversarial inputs across
// dtypes and shapes, in both dialects, and compared with an independent NumPy reference.
//
// One GoogleTest per case, `Ops/OpsRef.Matches/<op>_<variant>_<dtype>_<shape>_<dialect>`, from a
// programmatic table (all_cases()): op x dtype x shape. A case is a kernel entry in one of two
// embedded Python sources (kCurrentKernels: `import nki`, dst-first nki.isa; kLegacyKernels:
// `neuronxcc.nki`, return-value nki.isa, nl.load / nl.store), its inputs (drawn from our Rng,
// with special values written over some elements: zeros, -0, extremes, fp16 near-overflow, and
// NaN / inf in the `_specials` cases), the reference op the oracle evaluates, and a tolerance.
//
// The reference (tests/oracle/ops_reference.py, Debian's Python with NumPy) computes in float64 on
// the exact input values and rounds as the hardware does: the engines compute in float32 and round
// once into the destination type (RNE); matmul and reductions accumulate in float32. It runs once
// per build for every case: its results are cached next to this binary
// (ops_reference_cache/<stamp>/, the stamp covering the binary and the oracle script), so that
// ctest, which runs each case in its own process, pays for it once.
//
// Tolerances (|got - want| <= ulps * ulp(want) + rtol * |want| + atol + bound; NaN matches only
// NaN, +-inf only itself; ulp() is that of the output dtype at want):
//   - data movement (copies, casts, transposes, memset, iota, selections, shuffles, gathers, DMA),
//     max8 and the index searches (nc_find_index8, nc_match_replace8), and integer outputs: exact;
//   - arithmetic (tensor_tensor, tensor_scalar, scans, tensor_scalar_cumulative, nl.add ...): float32 1 ulp + 1e-6
//     relative; bfloat16 / float16 / float8 one ulp of the output type;
//   - transcendental functions (activation, nl.exp ..., power): float32 4 ulp + 1e-6 relative +
//     1e-6 absolute (the simulator evaluates exp, log, tanh, sigmoid and the activations made of
//     them in float64, rounded once (tensor/vector_math.h), the others with float32 libm on float32
//     arguments, within 2 ulp where measured; the absolute term covers the float32 cancellation of the gelu tail,
//     0.5 * x * (1 + erf(x / sqrt 2)), ~5e-7 at x = -5); narrow outputs one ulp of the output type
//     + the same absolute term;
//   - accumulations (tensor_reduce, tensor_partition_reduce, nl.sum/mean/prod, nc_matmul,
//     bn_stats/bn_aggr, activation_reduce): the arithmetic tolerance plus a per-element bound from
//     the oracle, (n + 2) * 2^-24 * sum |terms|: any float32 accumulation order passes.
//
// A case the simulator gets wrong (or cannot run) keeps its reference and gets an entry in
// kKnownFailures: it reports GTEST_SKIP with the reason and what it still sees, and FAILS once it
// matches, so that the entry gets removed.
//
// Run it as one process: build/tests/test_ops_reference (--gtest_filter='*tensor_scalar*' for a
// family; NKIA_OPS_VERBOSE=1 also prints every output's max abs / rel / ulp error, to calibrate
// tolerances). It is labelled slow because ctest starts one process (one CPython) per case.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "nki/opcodes.h"
#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"
#include "support/python_oracle.h"
#include "tensor/dtype.h"
#include "tensor/npy.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

// ---- the kernels ----------------------------------------------------------------------------------

constexpr const char* kCurrentKernels = R"py(
"""The op-versus-reference harness's kernels, current dialect: dst-first nki.isa calls."""
import nki
import nki.isa as nisa
import nki.language as nl


def _dt(name):
    return getattr(nl, name)


def _load(x, dtype=None):
    t = nl.ndarray(x.shape, dtype=x.dtype if dtype is None else _dt(dtype), buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    return t


def _opt(x):
    return None if x is None else _load(x)


def _tile(shape, dtype, buffer=nl.sbuf):
    return nl.ndarray(tuple(shape), dtype=_dt(dtype), buffer=buffer)


def _out(t):
    """A new HBM output holding tile t (a PSUM tile goes through an SBUF copy)."""
    if t.buffer == nl.psum:
        s = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=s, src=t)
        t = s
    out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def _index(x, index):
    return x if index is None else x[tuple(slice(*s) for s in index)]


@nki.jit
def tensor_tensor(a, b, op, out):
    z = _tile(a.shape, out)
    nisa.tensor_tensor(dst=z, data1=_load(a), data2=_load(b), op=getattr(nl, op))
    return _out(z)


@nki.jit
def tensor_scalar(a, op0, operand0, out, reverse0=False, op1=None, operand1=None, reverse1=False, v0=None,
                  v1=None, inplace=False):
    x = _load(a)
    z = x if inplace else _tile(a.shape, out)
    o0 = _load(v0) if operand0 == "tile" else operand0
    o1 = _load(v1) if operand1 == "tile" else operand1
    nisa.tensor_scalar(dst=z, data=x, op0=getattr(nl, op0), operand0=o0, reverse0=reverse0,
                       op1=getattr(nl, op1) if op1 else None, operand1=o1, reverse1=reverse1)
    return _out(z)


@nki.jit
def scalar_tensor_tensor(a, b, op0, operand0, op1, out, reverse0=False, reverse1=False, v0=None):
    z = _tile(a.shape, out)
    o0 = _load(v0) if operand0 == "tile" else operand0
    nisa.scalar_tensor_tensor(dst=z, data=_load(a), op0=getattr(nl, op0), operand0=o0, op1=getattr(nl, op1),
                              operand1=_load(b), reverse0=reverse0, reverse1=reverse1)
    return _out(z)


@nki.jit
def activation(a, func, out, scale=1.0, bias=None, scale_tile=None, inplace=False):
    x = _load(a)
    z = x if inplace else _tile(a.shape, out)
    nisa.activation(dst=z, op=getattr(nl, func), data=x, bias=_opt(bias),
                    scale=_load(scale_tile) if scale_tile is not None else scale)
    return _out(z)


@nki.jit
def reciprocal(a, out):
    z = _tile(a.shape, out)
    nisa.reciprocal(dst=z, data=_load(a))
    return _out(z)


@nki.jit
def tensor_tensor_view(a, op, out, view, b=None):
    """Operands that are views: 'strided' (the even and odd columns of one tile), 'halves' (the two
    halves of its free axis, as .ap() access patterns), 'inplace' (dst is data1)."""
    x = _load(a)
    P, F = a.shape
    fn = getattr(nl, op)
    if view == "inplace":
        nisa.tensor_tensor(dst=x, data1=x, data2=_load(b), op=fn)
        return _out(x)
    z = _tile((P, F // 2), out)
    if view == "strided":
        nisa.tensor_tensor(dst=z, data1=x[:, 0:F:2], data2=x[:, 1:F:2], op=fn)
    else:
        h = F // 2
        nisa.tensor_tensor(dst=z, data1=x.ap(pattern=[[F, P], [1, h]], offset=0),
                           data2=x.ap(pattern=[[F, P], [1, h]], offset=h), op=fn)
    return _out(z)


@nki.jit
def nl_where(c, a, b):
    return _out(nl.where(_load(c), _load(a), _load(b)))


@nki.jit
def nl_softmax(a):
    return _out(nl.softmax(_load(a), axis=1))


@nki.jit
def dma_hbm_to_hbm(a, out):
    o = nl.ndarray(a.shape, dtype=_dt(out), buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=a)
    return o


@nki.jit
def dma_sbuf_to_sbuf(a, out):
    x = _load(a)
    z = _tile(a.shape, out)
    nisa.dma_copy(dst=z, src=x)
    return _out(z)


@nki.jit
def activation_reduce(a, func, out, red, scale=1.0, bias=None):
    z = _tile(a.shape, out)
    r = _tile((a.shape[0], 1), red)
    nisa.activation_reduce(dst=z, op=getattr(nl, func), data=_load(a), reduce_op=nl.add, reduce_res=r,
                           bias=_opt(bias), scale=scale)
    return _out(z), _out(r)


@nki.jit
def nl_unary(a, func, out=None):
    fn = getattr(nl, func)
    x = _load(a)
    return _out(fn(x) if out is None else fn(x, dtype=_dt(out)))


@nki.jit
def nl_binary(op, out=None, a=None, b=None, sa=None, sb=None):
    x = _load(a) if a is not None else sa
    y = _load(b) if b is not None else sb
    fn = getattr(nl, op)
    return _out(fn(x, y) if out is None else fn(x, y, dtype=_dt(out)))


@nki.jit
def tensor_reduce(a, op, axis, out, negate=False, keepdims=False):
    axes = [axis] if isinstance(axis, int) else list(axis)
    shape = [1 if i in axes else d for i, d in enumerate(a.shape) if keepdims or i not in axes]
    if len(shape) == 1:
        shape.append(1)
    z = _tile(shape, out)
    nisa.tensor_reduce(dst=z, op=getattr(nl, op), data=_load(a), axis=axis, negate=negate, keepdims=keepdims)
    return _out(z)


@nki.jit
def nl_reduce(a, fn, axis, keepdims=False, out=None):
    kw = {} if out is None else {"dtype": _dt(out)}
    if keepdims:
        kw["keepdims"] = True
    return _out(getattr(nl, fn)(_load(a), axis=axis, **kw))


@nki.jit
def nc_matmul(s0, m0, modes, s1=None, m1=None, s2=None, m2=None, out="float32"):
    M, N = s0.shape[1], m0.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    flags = {"auto": None, "acc": True, "over": False}
    for (s, m), mode in zip([(s0, m0), (s1, m1), (s2, m2)], modes):
        nisa.nc_matmul(dst=acc, stationary=_load(s), moving=_load(m), accumulate=flags[mode])
    r = _tile((M, N), out)
    nisa.tensor_copy(dst=r, src=acc)
    return _out(r)


@nki.jit
def nc_matmul_double_row(s0, m0):
    M, N = s0.shape[2], m0.shape[2]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=_load(s0), moving=_load(m0), perf_mode=nisa.matmul_perf_mode.double_row)
    r = _tile((M, N), "float32")
    nisa.tensor_copy(dst=r, src=acc)
    return _out(r)


@nki.jit
def nl_matmul(x, y, transpose_x):
    r = nl.matmul(_load(x), _load(y), transpose_x=transpose_x)
    s = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=r)
    return _out(s)


@nki.jit
def nc_transpose(a, engine, enum=False):
    P, F = a.shape
    eng = getattr(nisa.engine, engine) if enum else getattr(nisa, engine + "_engine")
    t = nl.ndarray((F, P), dtype=a.dtype, buffer=nl.psum if engine == "tensor" else nl.sbuf)
    nisa.nc_transpose(dst=t, data=_load(a), engine=eng)
    return _out(t)


@nki.jit
def nl_transpose(a):
    return _out(nl.transpose(_load(a)))


@nki.jit
def tensor_copy(a, out, engine=None, enum=False):
    z = _tile(a.shape, out)
    if engine is None:
        nisa.tensor_copy(dst=z, src=_load(a))
    else:
        eng = getattr(nisa.engine, engine) if enum else getattr(nisa, engine + "_engine")
        nisa.tensor_copy(dst=z, src=_load(a), engine=eng)
    return _out(z)


@nki.jit
def nl_copy(a, out):
    return _out(nl.copy(_load(a), dtype=_dt(out)))


@nki.jit
def memset(shape, value, out):
    z = _tile(shape, out)
    nisa.memset(dst=z, value=value)
    return _out(z)


@nki.jit
def iota(shape, pattern, offset, channel_multiplier, out):
    z = _tile(shape, out)
    nisa.iota(dst=z, pattern=pattern, offset=offset, channel_multiplier=channel_multiplier)
    return _out(z)


@nki.jit
def affine_select(a, pattern, channel_multiplier, offset, cmp, on_false, out):
    z = _tile(a.shape, out)
    nisa.affine_select(dst=z, pattern=pattern, channel_multiplier=channel_multiplier, on_true_tile=_load(a),
                       on_false_value=on_false, cmp_op=getattr(nl, cmp), offset=offset)
    return _out(z)


@nki.jit
def tensor_tensor_scan(a, b, op0, op1, initial, out, reverse0=False, reverse1=False, init=None, inplace=False):
    x = _load(a)
    z = x if inplace else _tile(a.shape, out)
    nisa.tensor_tensor_scan(dst=z, data0=x, data1=_load(b),
                            initial=_load(init) if initial == "tile" else initial, op0=getattr(nl, op0),
                            op1=getattr(nl, op1), reverse0=reverse0, reverse1=reverse1)
    return _out(z)


@nki.jit
def tensor_scalar_cumulative(a, op0, op1, imm0, out, init=None):
    z = _tile(a.shape, out)
    nisa.tensor_scalar_cumulative(dst=z, src=_load(a), op0=getattr(nl, op0), op1=getattr(nl, op1), imm0=imm0,
                                  imm1=_opt(init), reduce_cmd=nisa.reduce_cmd.reset_reduce if init is None else
                                  nisa.reduce_cmd.load_reduce)
    return _out(z)


@nki.jit
def bn_stats(a, out):
    z = _tile((a.shape[0], 6), out)
    nisa.bn_stats(dst=z, data=_load(a))
    return _out(z)


@nki.jit
def bn_aggr(a, out):
    P, F = a.shape
    x = _load(a)
    chunks = (F + 511) // 512
    stats = _tile((P, 6 * chunks), "float32")
    for c in range(chunks):
        w = min(512, F - c * 512)
        nisa.bn_stats(dst=stats[:, 6 * c:6 * c + 6], data=x[:, c * 512:c * 512 + w])
    z = _tile((P, 2), out)
    nisa.bn_aggr(dst=z, data=stats)
    return _out(z)


@nki.jit
def dma_copy(a, out, index=None, dst_shape=None):
    src = _index(a, index)
    z = _tile(tuple(dst_shape) if dst_shape is not None else src.shape, out)
    nisa.dma_copy(dst=z, src=src)
    return _out(z)


@nki.jit
def dma_store(a, out):
    o = nl.ndarray(a.shape, dtype=_dt(out), buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=_load(a))
    return o


@nki.jit
def dma_interleave(a, b):
    P, F = a.shape
    o = nl.ndarray((P, 2 * F), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o[:, 0:2 * F:2], src=_load(a))
    nisa.dma_copy(dst=o[:, 1:2 * F:2], src=_load(b))
    return o


@nki.jit
def nl_load_store(a, out, load_dtype=None, index=None):
    src = _index(a, index)
    t = nl.load(src) if load_dtype is None else nl.load(src, dtype=_dt(load_dtype))
    o = nl.ndarray(t.shape, dtype=_dt(out), buffer=nl.shared_hbm)
    nl.store(o, value=t)
    return o


def _vals(x, cols):
    """Eight columns of x, cols = (start, step), copied into a new [P, 8] tile: the values to look for."""
    v = nl.ndarray((x.shape[0], 8), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=v, src=x[:, cols[0]:cols[0] + 8 * cols[1]:cols[1]])
    return v


@nki.jit
def max8(a, out):
    z = _tile((a.shape[0], 8), out)
    nisa.max8(dst=z, src=_load(a))
    return _out(z)


@nki.jit
def find_index8(a, cols, out, absent=None):
    """absent: a value written over the last of the vals (one the data does not hold)."""
    x = _load(a)
    v = _vals(x, cols)
    if absent is not None:
        nisa.memset(dst=v[:, 7:8], value=absent)
    z = _tile((a.shape[0], 8), out)
    nisa.nc_find_index8(dst=z, data=x, vals=v)
    return _out(z)


@nki.jit
def match_replace8(a, cols, imm, idx_out=None):
    x = _load(a)
    v = _vals(x, cols)
    z = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    if idx_out is None:
        nisa.nc_match_replace8(dst=z, data=x, vals=v, imm=imm)
        return _out(z)
    i = _tile((a.shape[0], 8), idx_out)
    nisa.nc_match_replace8(dst=z, data=x, vals=v, imm=imm, dst_idx=i)
    return _out(z), _out(i)


@nki.jit
def stream_shuffle(a, shuffle_mask, b=None, src_rows=None):
    """In place without b; src_rows: the source is the first src_rows partitions of a."""
    x = _load(a)
    z = x if b is None else _load(b)
    nisa.nc_stream_shuffle(dst=z, src=x if src_rows is None else x[0:src_rows], shuffle_mask=list(shuffle_mask))
    return _out(z)


@nki.jit
def range_select(a, b0, b1, comp_op0, comp_op1, range_start, out, red=None):
    z = _tile(a.shape, out)
    r = None if red is None else _tile((a.shape[0], 1), red)
    nisa.range_select(dst=z, on_true_tile=_load(a), comp_op0=getattr(nl, comp_op0), comp_op1=getattr(nl, comp_op1),
                      bound0=_load(b0), bound1=_load(b1), reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=r,
                      reduce_op=nl.maximum, range_start=range_start, on_false_value=nl.fp32.min)
    return _out(z) if r is None else (_out(z), _out(r))


@nki.jit
def select_reduce(pred, a, out, on_false=None, f=None, reverse_pred=False, red=None):
    z = _tile(a.shape, out)
    r = None if red is None else _tile((a.shape[0], 1), red)
    nisa.select_reduce(dst=z, predicate=_load(pred), on_true=_load(a), on_false=on_false if f is None else _load(f),
                       reduce_res=r, reduce_cmd=nisa.reduce_cmd.idle if r is None else nisa.reduce_cmd.reset_reduce,
                       reduce_op=nl.maximum, reverse_pred=reverse_pred)
    return _out(z) if r is None else (_out(z), _out(r))


@nki.jit
def copy_predicated(pred, b, a=None, value=None, reverse_pred=False):
    z = _load(b)
    nisa.tensor_copy_predicated(dst=z, src=value if a is None else _load(a), predicate=_load(pred),
                                reverse_pred=reverse_pred)
    return _out(z)


@nki.jit
def partition_reduce(a, op, out):
    z = _tile((1,) + tuple(a.shape[1:]), out)
    nisa.tensor_partition_reduce(dst=z, op=getattr(nl, op), data=_load(a))
    return _out(z)


@nki.jit
def gather_flattened(a, idx, out=None):
    x, i = _load(a), _load(idx)
    return _out(nl.gather_flattened(x, i) if out is None else nl.gather_flattened(x, i, dtype=_dt(out)))


@nki.jit
def local_gather(a, idx, k, n=None):
    """idx holds logical indices; the instruction takes element offsets (index * k)."""
    i = _load(idx)
    if k > 1:
        j = nl.ndarray(idx.shape, dtype=idx.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=j, data=i, op0=nl.left_shift, operand0=k.bit_length() - 1)
        i = j
    g = nl.ndarray((a.shape[0], 16 * idx.shape[1] if n is None else n, k), dtype=a.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=g, src_buffer=_load(a), index=i, num_elem_per_idx=k, num_valid_indices=n)
    return _out(g)


@nki.jit
def dma_transpose(a, axes=None, sbuf_src=False):
    perm = axes if axes is not None else {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[len(a.shape)]
    t = nl.ndarray(tuple(a.shape[d] for d in perm), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=_load(a) if sbuf_src else a, axes=axes)
    return _out(t)


@nki.jit
def sequence_bounds(ids):
    b = nl.ndarray((ids.shape[0], 2) + tuple(ids.shape[1:]), dtype=ids.dtype, buffer=nl.sbuf)
    nisa.sequence_bounds(dst=b, segment_ids=_load(ids))
    return _out(b)
)py";

constexpr const char* kLegacyKernels = R"py(
"""The op-versus-reference harness's kernels, legacy dialect: neuronxcc.nki, instructions that
return their result tile, nl.load / nl.store, index tiles."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _dt(name):
    return getattr(nl, name)


def _opt(x):
    return None if x is None else nl.load(x)


def _out(t):
    """A new HBM output holding tile t (a PSUM tile is copied to SBUF first)."""
    if t.buffer == nl.psum:
        t = nl.copy(t)
    out = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


def _index(x, index):
    """x indexed with index tiles, start + step * nl.arange(n) per axis."""
    if index is None:
        return x
    (p0, p1, ps), (f0, f1, fs) = index
    ip = nl.arange(len(range(p0, p1, ps)))[:, None]
    jf = nl.arange(len(range(f0, f1, fs)))[None, :]
    return x[p0 + ps * ip, f0 + fs * jf]


def _pred(expr, cmp):
    return {"equal": lambda e: e == 0, "not_equal": lambda e: e != 0, "less": lambda e: e < 0,
            "less_equal": lambda e: e <= 0, "greater": lambda e: e > 0,
            "greater_equal": lambda e: e >= 0}[cmp](expr)


def _affine(shape, pattern, offset, channel_multiplier):
    ip = nl.arange(shape[0])[:, None]
    jf = nl.arange(shape[1])[None, :]
    return ip * channel_multiplier + jf * pattern[0][0] + offset


@nki.jit
def tensor_tensor(a, b, op, out):
    return _out(nisa.tensor_tensor(nl.load(a), nl.load(b), getattr(nl, op), dtype=_dt(out)))


@nki.jit
def tensor_scalar(a, op0, operand0, out, reverse0=False, op1=None, operand1=None, reverse1=False, v0=None,
                  v1=None):
    o0 = nl.load(v0) if operand0 == "tile" else operand0
    o1 = nl.load(v1) if operand1 == "tile" else operand1
    return _out(nisa.tensor_scalar(nl.load(a), getattr(nl, op0), o0, reverse0=reverse0,
                                   op1=getattr(nl, op1) if op1 else None, operand1=o1, reverse1=reverse1,
                                   dtype=_dt(out)))


@nki.jit
def scalar_tensor_tensor(a, b, op0, operand0, op1, out, reverse0=False, reverse1=False, v0=None):
    o0 = nl.load(v0) if operand0 == "tile" else operand0
    return _out(nisa.scalar_tensor_tensor(data=nl.load(a), op0=getattr(nl, op0), operand0=o0,
                                          op1=getattr(nl, op1), operand1=nl.load(b), reverse0=reverse0,
                                          reverse1=reverse1, dtype=_dt(out)))


@nki.jit
def activation(a, func, out, scale=1.0, bias=None, scale_tile=None):
    return _out(nisa.activation(op=getattr(nl, func), data=nl.load(a), bias=_opt(bias),
                                scale=nl.load(scale_tile) if scale_tile is not None else scale, dtype=_dt(out)))


@nki.jit
def activation_reduce(a, func, out, red, scale=1.0, bias=None):
    r = nl.ndarray((a.shape[0], 1), dtype=_dt(red), buffer=nl.sbuf)
    z = nisa.activation_reduce(op=getattr(nl, func), data=nl.load(a), reduce_op=nl.add, reduce_res=r,
                               bias=_opt(bias), scale=scale, dtype=_dt(out))
    return _out(z), _out(r)


@nki.jit
def nl_unary(a, func, out=None):
    fn = getattr(nl, func)
    x = nl.load(a)
    return _out(fn(x) if out is None else fn(x, dtype=_dt(out)))


@nki.jit
def nl_binary(op, out=None, a=None, b=None, sa=None, sb=None):
    x = nl.load(a) if a is not None else sa
    y = nl.load(b) if b is not None else sb
    fn = getattr(nl, op)
    return _out(fn(x, y) if out is None else fn(x, y, dtype=_dt(out)))


@nki.jit
def tensor_reduce(a, op, axis, out, negate=False, keepdims=False):
    return _out(nisa.tensor_reduce(getattr(nl, op), nl.load(a), axis, negate=negate, keepdims=keepdims,
                                   dtype=_dt(out)))


@nki.jit
def nl_reduce(a, fn, axis, keepdims=False, out=None):
    kw = {} if out is None else {"dtype": _dt(out)}
    if keepdims:
        kw["keepdims"] = True
    return _out(getattr(nl, fn)(nl.load(a), axis=axis, **kw))


@nki.jit
def reciprocal(a, out):
    return _out(nisa.reciprocal(nl.load(a), dtype=_dt(out)))


@nki.jit
def tensor_tensor_view(a, op, out, view, b=None):
    x = nl.load(a)
    P, F = a.shape
    return _out(nisa.tensor_tensor(x[:, 0:F:2], x[:, 1:F:2], getattr(nl, op), dtype=_dt(out)))


@nki.jit
def nl_where(c, a, b):
    return _out(nl.where(nl.load(c), nl.load(a), nl.load(b)))


@nki.jit
def nl_softmax(a):
    return _out(nl.softmax(nl.load(a), axis=1))


@nki.jit
def store_psum(s0, m0):
    """nl.store of a PSUM tile: the legacy store copies it to SBUF first (SDK 2.26)."""
    res = nisa.nc_matmul(nl.load(s0), nl.load(m0))
    out = nl.ndarray((s0.shape[1], m0.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=res)
    return out


@nki.jit
def masked_exp_rows(a):
    """Appendix B of the spec: ragged rows, the last tile masked on load, compute and store."""
    R, F = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(F)[None, :]
    for t in nl.affine_range((R + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        tile = nl.load(a[i_p, i_f], mask=(i_p < R))
        nl.store(out[i_p, i_f], value=nl.exp(tile, mask=(i_p < R)), mask=(i_p < R))
    return out


@nki.jit
def nc_matmul(s0, m0, modes, s1=None, m1=None, s2=None, m2=None, out="float32"):
    M, N = s0.shape[1], m0.shape[1]
    pairs = [(s0, m0), (s1, m1), (s2, m2)][:len(modes)]
    if len(pairs) == 1:
        return _out(nl.copy(nisa.nc_matmul(nl.load(s0), nl.load(m0)), dtype=_dt(out)))
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for s, m in pairs:
        acc += nisa.nc_matmul(nl.load(s), nl.load(m))
    return _out(nl.copy(acc, dtype=_dt(out)))


@nki.jit
def nc_matmul_double_row(s0, m0):
    return _out(nl.copy(nisa.nc_matmul(nl.load(s0), nl.load(m0), perf_mode="double_row_gen3")))


@nki.jit
def nl_matmul(x, y, transpose_x):
    return _out(nl.copy(nl.matmul(nl.load(x), nl.load(y), transpose_x=transpose_x)))


@nki.jit
def nc_transpose(a, engine, enum=False):
    return _out(nisa.nc_transpose(nl.load(a), engine=getattr(nisa, engine + "_engine")))


@nki.jit
def nl_transpose(a):
    return _out(nl.transpose(nl.load(a)))


@nki.jit
def tensor_copy(a, out, engine=None, enum=False):
    if engine is None:
        return _out(nisa.tensor_copy(nl.load(a), dtype=_dt(out)))
    return _out(nisa.tensor_copy(nl.load(a), dtype=_dt(out), engine=getattr(nisa, engine + "_engine")))


@nki.jit
def nl_copy(a, out):
    return _out(nl.copy(nl.load(a), dtype=_dt(out)))


@nki.jit
def memset(shape, value, out):
    return _out(nisa.memset(tuple(shape), value, _dt(out)))


@nki.jit
def iota(shape, pattern, offset, channel_multiplier, out):
    return _out(nisa.iota(_affine(shape, pattern, offset, channel_multiplier), dtype=_dt(out)))


@nki.jit
def affine_select(a, pattern, channel_multiplier, offset, cmp, on_false, out):
    pred = _pred(_affine(a.shape, pattern, offset, channel_multiplier), cmp)
    return _out(nisa.affine_select(pred, nl.load(a), on_false, dtype=_dt(out)))


@nki.jit
def tensor_tensor_scan(a, b, op0, op1, initial, out, reverse0=False, reverse1=False, init=None):
    return _out(nisa.tensor_tensor_scan(nl.load(a), nl.load(b), nl.load(init) if initial == "tile" else initial,
                                        getattr(nl, op0), getattr(nl, op1), reverse0=reverse0, reverse1=reverse1,
                                        dtype=_dt(out)))


@nki.jit
def tensor_scalar_cumulative(a, op0, op1, imm0, out, init=None):
    z = nl.ndarray(a.shape, dtype=_dt(out), buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=z, src=nl.load(a), op0=getattr(nl, op0), op1=getattr(nl, op1), imm0=imm0,
                                  imm1=_opt(init), reduce_cmd=nisa.reduce_cmd.reset_reduce if init is None else
                                  nisa.reduce_cmd.load_reduce)
    return _out(z)


@nki.jit
def bn_stats(a, out):
    return _out(nisa.bn_stats(nl.load(a), dtype=_dt(out)))


@nki.jit
def bn_aggr(a, out):
    P, F = a.shape
    x = nl.load(a)
    chunks = (F + 511) // 512
    stats = nl.ndarray((P, 6 * chunks), dtype=nl.float32, buffer=nl.sbuf)
    for c in range(chunks):
        w = min(512, F - c * 512)
        stats[:, 6 * c:6 * c + 6] = nisa.bn_stats(x[:, c * 512:c * 512 + w])
    return _out(nisa.bn_aggr(stats, dtype=_dt(out)))


@nki.jit
def dma_copy(a, out, index=None, dst_shape=None):
    src = _index(a, index)
    z = nl.ndarray(tuple(dst_shape) if dst_shape is not None else src.shape, dtype=_dt(out), buffer=nl.sbuf)
    nisa.dma_copy(dst=z, src=src)
    return _out(z)


@nki.jit
def dma_store(a, out):
    o = nl.ndarray(a.shape, dtype=_dt(out), buffer=nl.shared_hbm)
    nl.store(o, value=nl.load(a))
    return o


@nki.jit
def dma_interleave(a, b):
    P, F = a.shape
    o = nl.ndarray((P, 2 * F), dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(P)[:, None]
    jf = nl.arange(F)[None, :]
    nl.store(o[ip, 2 * jf], value=nl.load(a))
    nl.store(o[ip, 2 * jf + 1], value=nl.load(b))
    return o


@nki.jit
def nl_load_store(a, out, load_dtype=None, index=None):
    src = _index(a, index)
    t = nl.load(src) if load_dtype is None else nl.load(src, dtype=_dt(load_dtype))
    o = nl.ndarray(t.shape, dtype=_dt(out), buffer=nl.shared_hbm)
    nl.store(o, value=t)
    return o


def _vals(x, cols):
    """Eight columns of x, cols = (start, step), copied into a new [P, 8] tile: the values to look for."""
    return nisa.tensor_copy(x[:, cols[0]:cols[0] + 8 * cols[1]:cols[1]])


@nki.jit
def max8(a, out):
    return _out(nisa.max8(src=nl.load(a), dtype=_dt(out)))


@nki.jit
def find_index8(a, cols, out, absent=None):
    """absent: a value written over the last of the vals (one the data does not hold)."""
    x = nl.load(a)
    v = _vals(x, cols)
    if absent is not None:
        v[:, 7:8] = nisa.memset((a.shape[0], 1), absent, a.dtype)
    return _out(nisa.nc_find_index8(data=x, vals=v, dtype=_dt(out)))


@nki.jit
def match_replace8(a, cols, imm, idx_out=None):
    x = nl.load(a)
    v = _vals(x, cols)
    if idx_out is None:
        return _out(nisa.nc_match_replace8(data=x, vals=v, imm=imm))
    i = nl.ndarray((a.shape[0], 8), dtype=_dt(idx_out), buffer=nl.sbuf)
    return _out(nisa.nc_match_replace8(data=x, vals=v, imm=imm, dst_idx=i)), _out(i)


@nki.jit
def stream_shuffle(a, shuffle_mask, b=None, src_rows=None):
    """In place without b; src_rows: the source is the first src_rows partitions of a."""
    x = nl.load(a)
    z = x if b is None else nl.load(b)
    nisa.nc_stream_shuffle(src=x if src_rows is None else x[0:src_rows], dst=z, shuffle_mask=list(shuffle_mask))
    return _out(z)


@nki.jit
def range_select(a, b0, b1, comp_op0, comp_op1, range_start, out, red=None):
    r = None if red is None else nl.ndarray((a.shape[0], 1), dtype=_dt(red), buffer=nl.sbuf)
    z = nisa.range_select(on_true_tile=nl.load(a), comp_op0=getattr(nl, comp_op0), comp_op1=getattr(nl, comp_op1),
                          bound0=nl.load(b0), bound1=nl.load(b1), reduce_cmd=nisa.reduce_cmd.reset_reduce,
                          reduce_res=r, reduce_op=nl.maximum, range_start=range_start, on_false_value=nl.fp32.min,
                          dtype=_dt(out))
    return _out(z) if r is None else (_out(z), _out(r))


@nki.jit
def select_reduce(pred, a, out, on_false=None, f=None, reverse_pred=False, red=None):
    z = nl.ndarray(a.shape, dtype=_dt(out), buffer=nl.sbuf)
    r = None if red is None else nl.ndarray((a.shape[0], 1), dtype=_dt(red), buffer=nl.sbuf)
    nisa.select_reduce(dst=z, predicate=nl.load(pred), on_true=nl.load(a),
                       on_false=on_false if f is None else nl.load(f), reduce_res=r,
                       reduce_cmd=nisa.reduce_cmd.idle if r is None else nisa.reduce_cmd.reset_reduce,
                       reduce_op=nl.maximum, reverse_pred=reverse_pred)
    return _out(z) if r is None else (_out(z), _out(r))


@nki.jit
def copy_predicated(pred, b, a=None, value=None, reverse_pred=False):
    z = nl.load(b)
    nisa.tensor_copy_predicated(src=value if a is None else nl.load(a), dst=z, predicate=nl.load(pred),
                                reverse_pred=reverse_pred)
    return _out(z)


@nki.jit
def partition_reduce(a, op, out):
    return _out(nisa.tensor_partition_reduce(getattr(nl, op), nl.load(a), dtype=_dt(out)))


@nki.jit
def gather_flattened(a, idx, out=None):
    x, i = nl.load(a), nl.load(idx)
    return _out(nl.gather_flattened(x, i) if out is None else nl.gather_flattened(x, i, dtype=_dt(out)))


@nki.jit
def local_gather(a, idx, k, n=None):
    """idx holds logical indices; the instruction takes element offsets (index * k)."""
    i = nl.load(idx)
    if k > 1:
        i = nisa.tensor_scalar(i, nl.left_shift, k.bit_length() - 1, dtype=idx.dtype)
    return _out(nisa.local_gather(nl.load(a), i, num_elem_per_idx=k, num_valid_indices=n))


@nki.jit
def dma_transpose(a, axes=None, sbuf_src=False):
    return _out(nisa.dma_transpose(nl.load(a) if sbuf_src else a, axes=axes))


@nki.jit
def sequence_bounds(ids):
    return _out(nisa.sequence_bounds(segment_ids=nl.load(ids)))
)py";

// ---- cases ----------------------------------------------------------------------------------------

// How an input's values are drawn; `specials` are then written over elements spread across it.
enum class Dist : uint8_t {
  kNormal,     // p0 + p1 * N(0, 1)
  kUniform,    // U[p0, p1)
  kIntegers,   // integers in [p0, p1]
  kSmallInts,  // integer-valued floats in [p0, p1]: many ties, for comparisons
};

struct InputSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  Dist dist = Dist::kNormal;
  double p0 = 0.0, p1 = 1.0;
  std::vector<double> specials;
};

struct Tol {
  double ulps = 0, rtol = 0, atol = 0;
};

struct OpCase {
  std::string name;  // the test name
  std::string what;  // the operation, for messages: "nisa.tensor_tensor(op=add)"
  bool legacy = false;
  std::string entry;
  std::map<std::string, std::string> kwargs;  // Python literals
  std::vector<InputSpec> inputs;
  std::string ref_op;       // the oracle's reference
  std::string ref_params;   // a JSON object
  std::vector<DType> outs;  // expected output dtypes
  Tol tol;
  std::string known_failure;
  std::string key;     // the reference's cache key (equal for the two dialects of a case)
  std::string target;  // the NeuronCore the case runs on: "trn1" (empty) or "trn2"
};

void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}

// Small builders for the JSON parameters and the Python literals.
std::string num_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string py_num(double v) {
  if (std::isinf(v)) return v > 0 ? "1e999" : "-1e999";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  std::string t = num_text(v);
  if (t.find_first_of(".eEn") == std::string::npos) t += ".0";  // a float literal, not an int
  return t;
}
std::string py_str(const std::string& s) {
  return "'" + s + "'";
}
std::string py_bool(bool b) {
  return b ? "True" : "False";
}
std::string py_ints(const std::vector<int64_t>& v, bool tuple = true) {
  std::string s = tuple ? "(" : "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (tuple && v.size() == 1) s += ",";
  return s + (tuple ? ")" : "]");
}

class Json {
 public:
  Json& s(const std::string& k, const std::string& v) { return raw(k, "\"" + v + "\""); }
  Json& n(const std::string& k, double v) { return raw(k, num_text(v)); }
  Json& b(const std::string& k, bool v) { return raw(k, v ? "true" : "false"); }
  Json& ints(const std::string& k, const std::vector<int64_t>& v) {
    std::string t = "[";
    for (size_t i = 0; i < v.size(); ++i) t += (i ? "," : "") + std::to_string(v[i]);
    return raw(k, t + "]");
  }
  Json& raw(const std::string& k, const std::string& v) {
    body_ += (body_.empty() ? "" : ", ") + ("\"" + k + "\": ") + v;
    return *this;
  }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

std::string dt_tag(DType t) {
  switch (t) {
    case DType::kFloat32: return "fp32";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat16: return "fp16";
    case DType::kFloat8E4M3: return "e4m3";
    case DType::kFloat8E5M2: return "e5m2";
    case DType::kInt8: return "i8";
    case DType::kInt16: return "i16";
    case DType::kInt32: return "i32";
    case DType::kUInt8: return "u8";
    case DType::kUInt32: return "u32";
    default: return std::string(dtype_name(t));
  }
}

std::string shape_tag(const Shape& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "x" : "") + std::to_string(s[i]);
  return t;
}

std::string shape_string(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string dt_name(DType t) {
  return std::string(dtype_name(t));
}
bool is_float(DType t) {
  return dtype_is_float(t);
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// ---- the case table -------------------------------------------------------------------------------

constexpr double kF32Max = 3.4028234663852886e38;
constexpr double kPi = 3.14159265358979323846;

// Shapes: partitions 1, 7, 128; free sizes 1, 3, 64, 512; a 3-D free shape.
const Shape kBig = {128, 512};
const std::vector<Shape> kShapeSweep = {{1, 1}, {1, 512}, {7, 3}, {7, 64}, {128, 1}, {128, 3}, {128, 64}, {128, 4, 16}};

// Finite values worth meeting in any arithmetic input, by dtype.
std::vector<double> edges(DType t) {
  switch (t) {
    case DType::kFloat16: return {0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, 6.103515625e-05, 0.5, -2.5, 1000.0};
    case DType::kBFloat16:
    case DType::kFloat32: return {0.0, -0.0, 1.0, -1.0, 1e30, -1e30, 1.1754943508222875e-38, 0.5, -2.5, 1e-20};
    case DType::kInt32: return {0, -1, 1, 2147483647, -2147483648.0, 16777217, -16777217, 65536};
    case DType::kInt8: return {0, -1, 1, 127, -128, 64, -64};
    case DType::kUInt8: return {0, 1, 255, 128, 127};
    default: return {0.0, 1.0};
  }
}

const std::vector<double> kNanInf = {std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(),
                                     3e38,
                                     -3e38,
                                     0.0,
                                     -0.0};

InputSpec in_normal(const std::string& name, DType t, Shape s, double scale = 1.0, double mean = 0.0) {
  InputSpec in{name, t, std::move(s), Dist::kNormal, mean, scale, {}};
  return in;
}
InputSpec in_uniform(const std::string& name, DType t, Shape s, double lo, double hi) {
  return InputSpec{name, t, std::move(s), Dist::kUniform, lo, hi, {}};
}
InputSpec in_ints(const std::string& name, DType t, Shape s, double lo, double hi) {
  return InputSpec{name, t, std::move(s), Dist::kIntegers, lo, hi, {}};
}
InputSpec with(InputSpec in, std::vector<double> specials) {
  in.specials.insert(in.specials.end(), specials.begin(), specials.end());
  return in;
}

struct IntRangeD {
  double lo, hi;
};
IntRangeD int_range(DType t) {
  switch (t) {
    case DType::kInt8: return {-128, 127};
    case DType::kUInt8: return {0, 255};
    case DType::kInt16: return {-32768, 32767};
    case DType::kUInt16: return {0, 65535};
    case DType::kUInt32: return {0, 4294967295.0};
    default: return {-2147483648.0, 2147483647.0};
  }
}
int int_bits(DType t) {
  return dtype_size(t) * 8;
}

Tol tol_exact() {
  return {};
}
Tol tol_arith(DType out) {
  if (out == DType::kFloat32) return {1, 1e-6, 0};
  if (is_float(out)) return {1, 0, 0};
  return {};
}
Tol tol_transc(DType out) {
  if (out == DType::kFloat32) return {4, 1e-6, 1e-6};
  if (is_float(out)) return {1, 0, 1e-6};
  return {};
}

// Collects the cases: each `add` makes the current-dialect case and its legacy twin (same inputs,
// same reference), unless the API exists in one dialect only.
class Table {
 public:
  std::vector<OpCase> cases;

  void add(OpCase c, bool legacy_too = true, bool current_too = true) {
    std::string base = c.name;
    c.key = reference_key(c);
    c.name = base + "_current";
    c.legacy = false;
    if (current_too) cases.push_back(c);
    if (legacy_too) {
      c.name = base + "_legacy";
      c.legacy = true;
      cases.push_back(c);
    }
  }

 private:
  static std::string reference_key(const OpCase& c) {
    std::string s = c.ref_op + "|" + c.ref_params + "|";
    for (const auto& in : c.inputs) {
      s += in.name + ":" + dt_name(in.dtype) + shape_string(in.shape) + std::to_string(static_cast<int>(in.dist)) +
           ":" + num_text(in.p0) + "," + num_text(in.p1) + ":";
      for (double v : in.specials) s += num_text(v) + ",";
      s += "|";
    }
    for (DType t : c.outs) s += dt_name(t) + ",";
    return "r" + hex(fnv1a(s));
  }
};

OpCase make(std::string name, std::string what, std::string entry, std::string ref_op) {
  OpCase c;
  c.name = std::move(name);
  c.what = std::move(what);
  c.entry = std::move(entry);
  c.ref_op = std::move(ref_op);
  return c;
}

// -- tensor_tensor ---------------------------------------------------------------------------------

void add_tensor_tensor(Table& t) {
  auto tt = [&](const std::string& name, const std::string& op, std::vector<InputSpec> ins, DType out,
                const std::string& mode, Tol tol) {
    OpCase c = make(name, "nisa.tensor_tensor(op=" + op + ")", "tensor_tensor", "binary");
    c.kwargs = {{"op", py_str(op)}, {"out", py_str(dt_name(out))}};
    c.inputs = std::move(ins);
    c.ref_params = Json().s("op", op).s("mode", mode).str();
    c.outs = {out};
    c.tol = tol;
    t.add(c);
  };
  const std::vector<DType> floats = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};
  // Arithmetic on every float dtype, one big tile each.
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"})
    for (DType d : floats) {
      const double scale = d == DType::kFloat16 ? 100.0 : 10.0;
      tt(std::string("tensor_tensor_") + op + "_" + dt_tag(d) + "_" + shape_tag(kBig), op,
         {with(in_normal("a", d, kBig, scale), edges(d)), with(in_normal("b", d, kBig, scale), edges(d))}, d, "float",
         tol_arith(d));
    }
  for (DType d : floats)
    tt("tensor_tensor_power_" + dt_tag(d) + "_" + shape_tag(kBig), "power",
       {with(in_uniform("a", d, kBig, 0.05, 4.0), {1.0, 0.5, 2.0}),
        with(in_uniform("b", d, kBig, -3.0, 3.0), {0.0, 1.0, 0.5})},
       d, "float", tol_transc(d));
  // Every shape, for add and multiply.
  for (const Shape& s : kShapeSweep) {
    tt("tensor_tensor_add_fp32_" + shape_tag(s), "add",
       {with(in_normal("a", DType::kFloat32, s), {-0.0}), in_normal("b", DType::kFloat32, s)}, DType::kFloat32, "float",
       tol_arith(DType::kFloat32));
    tt("tensor_tensor_multiply_bf16_" + shape_tag(s), "multiply",
       {in_normal("a", DType::kBFloat16, s, 3.0), in_normal("b", DType::kBFloat16, s, 3.0)}, DType::kBFloat16, "float",
       tol_arith(DType::kBFloat16));
  }
  // Mixed dtypes: the engine computes in float32 and rounds once into the destination.
  const Shape m = {128, 64};
  tt("tensor_tensor_add_bf16_to_fp32_128x64", "add",
     {in_normal("a", DType::kBFloat16, m), in_normal("b", DType::kBFloat16, m, 1e-3)}, DType::kFloat32, "float",
     tol_arith(DType::kFloat32));
  tt("tensor_tensor_multiply_fp32_to_bf16_128x64", "multiply",
     {in_normal("a", DType::kFloat32, m), in_normal("b", DType::kFloat32, m)}, DType::kBFloat16, "float",
     tol_arith(DType::kBFloat16));
  tt("tensor_tensor_subtract_fp16_bf16_to_fp32_128x64", "subtract",
     {in_normal("a", DType::kFloat16, m, 100.0), in_normal("b", DType::kBFloat16, m, 100.0)}, DType::kFloat32, "float",
     tol_arith(DType::kFloat32));
  tt("tensor_tensor_add_fp32_to_fp16_overflow_128x64", "add",
     {with(in_normal("a", DType::kFloat32, m, 3e4), {65504.0, 65519.0, 65520.0, -70000.0}),
      with(in_normal("b", DType::kFloat32, m, 3e4), {0.0, 0.0, 0.0, 0.0})},
     DType::kFloat16, "float", tol_arith(DType::kFloat16));
  tt("tensor_tensor_divide_fp32_to_fp8e4m3_128x64", "divide",
     {in_normal("a", DType::kFloat32, m, 100.0), with(in_normal("b", DType::kFloat32, m), {1.0, 0.5, 0.25})},
     DType::kFloat8E4M3, "float", tol_arith(DType::kFloat8E4M3));
  // Comparisons and logical ops: integer-valued inputs, so that ties are common; results are 1 / 0.
  auto small = [](const std::string& n, DType d, Shape s) {
    return InputSpec{n, d, std::move(s), Dist::kSmallInts, -3, 3, {}};
  };
  for (const char* op : {"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"}) {
    tt(std::string("tensor_tensor_") + op + "_fp32_128x64", op,
       {small("a", DType::kFloat32, m), small("b", DType::kFloat32, m)}, DType::kFloat32, "float", tol_exact());
    tt(std::string("tensor_tensor_") + op + "_bf16_to_u8_128x64", op,
       {small("a", DType::kBFloat16, m), small("b", DType::kBFloat16, m)}, DType::kUInt8, "float", tol_exact());
  }
  for (const char* op : {"logical_and", "logical_or", "logical_xor"})
    tt(std::string("tensor_tensor_") + op + "_fp32_128x64", op,
       {InputSpec{"a", DType::kFloat32, m, Dist::kSmallInts, -1, 1, {0.5, -0.0}},
        InputSpec{"b", DType::kFloat32, m, Dist::kSmallInts, 0, 2, {}}},
       DType::kFloat32, "float", tol_exact());
  // Integers: int32 tiles alone run on GpSimd in exact integer arithmetic (wrapping).
  for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum"})
    tt(std::string("tensor_tensor_") + op + "_i32_128x64", op,
       {with(in_ints("a", DType::kInt32, m, -2147483648.0, 2147483647.0), edges(DType::kInt32)),
        with(in_ints("b", DType::kInt32, m, -2147483648.0, 2147483647.0), edges(DType::kInt32))},
       DType::kInt32, "int", tol_exact());
  tt("tensor_tensor_add_i32_small_128x64", "add",
     {in_ints("a", DType::kInt32, m, -100000, 100000), in_ints("b", DType::kInt32, m, -100000, 100000)}, DType::kInt32,
     "int", tol_exact());
  for (const char* op : {"equal", "greater"})
    tt(std::string("tensor_tensor_") + op + "_i32_128x64", op,
       {with(in_ints("a", DType::kInt32, m, -3, 3), {16777217, 2147483647}),
        with(in_ints("b", DType::kInt32, m, -3, 3), {16777216, 2147483646})},
       DType::kInt32, "int", tol_exact());
  // Other integer tiles go through float32 and are written back by the float-to-int rule.
  tt("tensor_tensor_add_i8_128x64", "add",
     {in_ints("a", DType::kInt8, m, -60, 60), in_ints("b", DType::kInt8, m, -60, 60)}, DType::kInt8, "float",
     tol_exact());
  tt("tensor_tensor_multiply_i8_128x64", "multiply",
     {in_ints("a", DType::kInt8, m, -11, 11), in_ints("b", DType::kInt8, m, -11, 11)}, DType::kInt8, "float",
     tol_exact());
  tt("tensor_tensor_add_i8_overflow_128x64", "add",
     {in_ints("a", DType::kInt8, m, -128, 127), in_ints("b", DType::kInt8, m, -128, 127)}, DType::kInt8, "float",
     tol_exact());
  tt("tensor_tensor_subtract_u8_overflow_128x64", "subtract",
     {in_ints("a", DType::kUInt8, m, 0, 255), in_ints("b", DType::kUInt8, m, 0, 255)}, DType::kUInt8, "float",
     tol_exact());
  // Bitvec operators on the bit patterns; shifts are logical, by 0 .. bits-1.
  for (DType d : {DType::kInt32, DType::kInt8, DType::kUInt8}) {
    const IntRangeD r = int_range(d);
    for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}) {
      const bool shift = std::string(op).find("shift") != std::string::npos;
      tt(std::string("tensor_tensor_") + op + "_" + dt_tag(d) + "_128x64", op,
         {with(in_ints("a", d, m, r.lo, r.hi), edges(d)),
          shift ? in_ints("b", d, m, 0, int_bits(d) - 1) : with(in_ints("b", d, m, r.lo, r.hi), edges(d))},
         d, "bitvec", tol_exact());
    }
  }
  // NaN, inf and overflow (NumPy-on-float32 semantics where the docs are silent).
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "less"})
    tt(std::string("tensor_tensor_") + op + "_fp32_specials_7x64", op,
       {with(in_normal("a", DType::kFloat32, {7, 64}), kNanInf),
        with(in_normal("b", DType::kFloat32, {7, 64}), {0.0, std::numeric_limits<double>::quiet_NaN(), -0.0,
                                                        std::numeric_limits<double>::infinity(), 3e38, 1e-30, 0.0})},
       DType::kFloat32, "float", tol_arith(DType::kFloat32));
  for (const char* op : {"add", "multiply"})
    tt(std::string("tensor_tensor_") + op + "_fp16_overflow_7x64", op,
       {with(in_normal("a", DType::kFloat16, {7, 64}, 3e4), {65504.0, 60000.0, -65504.0, 300.0}),
        with(in_normal("b", DType::kFloat16, {7, 64}, 3e4), {16.0, 60000.0, -65504.0, 300.0})},
       DType::kFloat16, "float", tol_arith(DType::kFloat16));
}

// -- tensor_scalar and scalar_tensor_tensor ---------------------------------------------------------

struct TsStep {
  std::string op;
  std::string operand;  // a number as text, or "tile"
  bool reverse = false;
};

void add_tensor_scalar(Table& t) {
  auto ts = [&](const std::string& name, InputSpec data, TsStep s0, std::optional<TsStep> s1, DType out,
                const std::string& mode, Tol tol) {
    OpCase c = make(name, "nisa.tensor_scalar(op0=" + s0.op + (s1 ? ", op1=" + s1->op : "") + ")", "tensor_scalar",
                    "tensor_scalar");
    const Shape col = {data.shape[0], 1};
    c.inputs = {data};
    Json j;
    j.s("op0", s0.op).b("reverse0", s0.reverse).s("mode", mode);
    c.kwargs = {{"op0", py_str(s0.op)}, {"out", py_str(dt_name(out))}, {"reverse0", py_bool(s0.reverse)}};
    auto operand = [&](const TsStep& s, const std::string& key, const std::string& tile_name, DType tile_dtype) {
      if (s.operand == "tile") {
        c.kwargs[key] = py_str("tile");
        c.inputs.push_back(with(in_normal(tile_name, tile_dtype, col, 2.0), {0.0, -1.0, 0.5}));
        j.s(key, "tile");
      } else {
        c.kwargs[key] = s.operand;
        j.raw(key, s.operand);
      }
    };
    const DType tile_dtype = mode == "bitvec" ? data.dtype : DType::kFloat32;
    operand(s0, "operand0", "v0", tile_dtype);
    if (s1) {
      c.kwargs["op1"] = py_str(s1->op);
      c.kwargs["reverse1"] = py_bool(s1->reverse);
      j.s("op1", s1->op).b("reverse1", s1->reverse);
      operand(*s1, "operand1", "v1", tile_dtype);
    }
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol;
    t.add(c);
  };
  const std::vector<DType> floats = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"})
    for (DType d : floats)
      ts(std::string("tensor_scalar_") + op + "_number_" + dt_tag(d) + "_" + shape_tag(kBig),
         with(in_normal("a", d, kBig, 10.0), edges(d)), {op, "0.3"}, std::nullopt, d, "float", tol_arith(d));
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum"})
    for (DType d : {DType::kFloat32, DType::kBFloat16})
      ts(std::string("tensor_scalar_") + op + "_tile_" + dt_tag(d) + "_" + shape_tag(kBig),
         with(in_normal("a", d, kBig, 10.0), edges(d)), {op, "tile"}, std::nullopt, d, "float", tol_arith(d));
  const Shape m = {128, 64};
  for (const char* op : {"subtract", "divide"}) {
    ts(std::string("tensor_scalar_") + op + "_reverse0_number_fp32_128x64", in_normal("a", DType::kFloat32, m, 3.0),
       {op, "2.5", true}, std::nullopt, DType::kFloat32, "float", tol_arith(DType::kFloat32));
    ts(std::string("tensor_scalar_") + op + "_reverse0_tile_fp32_128x64", in_normal("a", DType::kFloat32, m, 3.0),
       {op, "tile", true}, std::nullopt, DType::kFloat32, "float", tol_arith(DType::kFloat32));
  }
  ts("tensor_scalar_power_number_fp32_128x64", in_uniform("a", DType::kFloat32, m, 0.01, 5.0), {"power", "1.5"},
     std::nullopt, DType::kFloat32, "float", tol_transc(DType::kFloat32));
  ts("tensor_scalar_greater_number_fp32_128x64", with(in_normal("a", DType::kFloat32, m), {0.25, -0.0}),
     {"greater", "0.25"}, std::nullopt, DType::kFloat32, "float", tol_exact());
  ts("tensor_scalar_equal_tile_bf16_to_u8_128x64", InputSpec{"a", DType::kBFloat16, m, Dist::kSmallInts, -2, 2, {}},
     {"equal", "tile"}, std::nullopt, DType::kUInt8, "float", tol_exact());
  // Two operators in one instruction: the intermediate stays float32.
  for (DType d : floats)
    ts("tensor_scalar_multiply_add_" + dt_tag(d) + "_" + shape_tag(kBig), with(in_normal("a", d, kBig, 3.0), edges(d)),
       {"multiply", "3.3"}, TsStep{"add", "0.7"}, d, "float", tol_arith(d));
  ts("tensor_scalar_subtract_tile_multiply_bf16_128x64", in_normal("a", DType::kBFloat16, m, 3.0), {"subtract", "tile"},
     TsStep{"multiply", "tile"}, DType::kBFloat16, "float", tol_arith(DType::kBFloat16));
  ts("tensor_scalar_divide_reverse_subtract_reverse_fp32_128x64", in_uniform("a", DType::kFloat32, m, 0.5, 4.0),
     {"divide", "1.0", true}, TsStep{"subtract", "1.0", true}, DType::kFloat32, "float", tol_arith(DType::kFloat32));
  ts("tensor_scalar_divide_multiply_fp32_to_i32_128x64", in_normal("a", DType::kFloat32, m, 50.0), {"divide", "3.0"},
     TsStep{"multiply", "3.0"}, DType::kInt32, "float", tol_exact());
  ts("tensor_scalar_multiply_fp32_to_bf16_128x64", in_normal("a", DType::kFloat32, m), {"multiply", "1.7"},
     std::nullopt, DType::kBFloat16, "float", tol_arith(DType::kBFloat16));
  // Integer data with an arithmetic operator: through float32 (the doc: operands are float32).
  ts("tensor_scalar_add_i32_128x64",
     with(in_ints("a", DType::kInt32, m, -1000000, 1000000), {16777217, 16777216, -16777217}), {"add", "1.0"},
     std::nullopt, DType::kInt32, "float", tol_exact());
  // Bitvec operators: integer operands, bit patterns.
  ts("tensor_scalar_bitwise_and_i32_128x64",
     with(in_ints("a", DType::kInt32, m, -2147483648.0, 2147483647.0), edges(DType::kInt32)), {"bitwise_and", "255"},
     std::nullopt, DType::kInt32, "bitvec", tol_exact());
  ts("tensor_scalar_right_shift_i32_128x64",
     with(in_ints("a", DType::kInt32, m, -2147483648.0, 2147483647.0), edges(DType::kInt32)), {"right_shift", "4"},
     std::nullopt, DType::kInt32, "bitvec", tol_exact());
  ts("tensor_scalar_left_shift_xor_i32_128x64",
     with(in_ints("a", DType::kInt32, m, -2147483648.0, 2147483647.0), edges(DType::kInt32)), {"left_shift", "3"},
     TsStep{"bitwise_xor", "21845"}, DType::kInt32, "bitvec", tol_exact());
  ts("tensor_scalar_bitwise_or_u8_128x64", with(in_ints("a", DType::kUInt8, m, 0, 255), edges(DType::kUInt8)),
     {"bitwise_or", "tile"}, std::nullopt, DType::kUInt8, "bitvec", tol_exact());
  // Shapes, and a 3-D tile with a per-partition operand.
  for (const Shape& s : kShapeSweep)
    ts("tensor_scalar_multiply_add_fp32_" + shape_tag(s), in_normal("a", DType::kFloat32, s), {"multiply", "tile"},
       TsStep{"add", "-1.25"}, DType::kFloat32, "float", tol_arith(DType::kFloat32));
  ts("tensor_scalar_add_number_fp32_specials_7x64", with(in_normal("a", DType::kFloat32, {7, 64}), kNanInf),
     {"add", "1.0"}, TsStep{"maximum", "0.0"}, DType::kFloat32, "float", tol_arith(DType::kFloat32));
}

void add_scalar_tensor_tensor(Table& t) {
  auto stt = [&](const std::string& name, DType d, const Shape& s, const std::string& op0, const std::string& operand0,
                 const std::string& op1, bool rev0, bool rev1, DType out) {
    OpCase c = make(name, "nisa.scalar_tensor_tensor(op0=" + op0 + ", op1=" + op1 + ")", "scalar_tensor_tensor", "stt");
    c.inputs = {with(in_normal("a", d, s, 3.0), edges(d)), in_normal("b", d, s, 3.0)};
    c.kwargs = {{"op0", py_str(op0)},
                {"op1", py_str(op1)},
                {"out", py_str(dt_name(out))},
                {"reverse0", py_bool(rev0)},
                {"reverse1", py_bool(rev1)}};
    Json j;
    j.s("op0", op0).s("op1", op1).b("reverse0", rev0).b("reverse1", rev1);
    if (operand0 == "tile") {
      c.kwargs["operand0"] = py_str("tile");
      c.inputs.push_back(in_normal("v0", DType::kFloat32, {s[0], 1}));
      j.s("operand0", "tile");
    } else {
      c.kwargs["operand0"] = operand0;
      j.raw("operand0", operand0);
    }
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol_arith(out);
    t.add(c);
  };
  stt("scalar_tensor_tensor_subtract_multiply_tile_fp32_128x512", DType::kFloat32, kBig, "subtract", "tile", "multiply",
      false, false, DType::kFloat32);
  stt("scalar_tensor_tensor_subtract_multiply_tile_bf16_128x512", DType::kBFloat16, kBig, "subtract", "tile",
      "multiply", false, false, DType::kBFloat16);
  stt("scalar_tensor_tensor_multiply_add_number_fp16_128x64", DType::kFloat16, {128, 64}, "multiply", "1.3", "add",
      false, false, DType::kFloat16);
  stt("scalar_tensor_tensor_subtract_divide_reverse_fp32_7x64", DType::kFloat32, {7, 64}, "subtract", "0.5", "divide",
      true, true, DType::kFloat32);
  stt("scalar_tensor_tensor_maximum_multiply_bf16_to_fp32_128x4x16", DType::kBFloat16, {128, 4, 16}, "maximum", "tile",
      "multiply", false, false, DType::kFloat32);
}

// -- activation and the nl.* unary functions --------------------------------------------------------

struct ActFunc {
  const char* name;
  double lo, hi;        // input range (the Scalar engine's valid range where it is limited)
  bool transcendental;  // libm tolerance
  bool all_reals;       // valid on [-inf, inf]: gets a specials case
};

const std::vector<ActFunc>& act_funcs() {
  static const std::vector<ActFunc> f = {
      {"copy", -100, 100, false, true},
      {"exp", -20, 20, true, true},
      {"log", 1e-6, 1e6, true, false},
      {"sqrt", 1e-6, 1e6, true, false},
      {"rsqrt", 1e-6, 1e6, true, false},
      {"reciprocal", 0.01, 100, true, false},
      {"tanh", -6, 6, true, true},
      {"sigmoid", -20, 20, true, true},
      {"relu", -10, 10, false, true},
      {"gelu", -8, 8, true, true},
      {"gelu_apprx_tanh", -8, 8, true, true},
      {"silu", -20, 20, true, true},
      {"softplus", -20, 20, true, true},
      {"sin", -kPi, kPi, true, false},
      {"cos", -kPi, kPi, true, false},
      {"tan", -1.4, 1.4, true, false},
      {"arctan", -kPi / 2, kPi / 2, true, false},
      {"erf", -4, 4, true, true},
      {"abs", -10, 10, false, true},
      {"negative", -10, 10, false, true},
      {"sign", -10, 10, false, true},
      {"square", -100, 100, false, true},
      {"floor", -100, 100, false, true},
      {"ceil", -100, 100, false, true},
      {"trunc", -100, 100, false, true},
      {"rint", -100, 100, false, true},
  };
  return f;
}

void add_activation(Table& t) {
  // dst = func(data * scale + bias), bias a [P, 1] tile. The input is drawn so that the argument
  // covers the function's range: arg = x * scale + bias with x uniform in [lo - b, hi - b] / scale.
  auto act = [&](const std::string& name, const ActFunc& f, DType in, DType out, const Shape& s, double scale,
                 bool bias, std::vector<double> specials, bool scale_tile = false) {
    OpCase c = make(name, std::string("nisa.activation(op=") + f.name + ")", "activation", "activation");
    const double span = (f.hi - f.lo) * 0.45;
    const double mid = (f.hi + f.lo) / 2;
    // bias in [-0.05, 0.05] * span keeps the argument inside [lo, hi]
    InputSpec x = in_uniform("a", in, s, (mid - span) / scale, (mid + span) / scale);
    const bool ranged = f.lo > 0;  // log, sqrt, rsqrt, reciprocal: keep the argument positive
    if (ranged) x = in_uniform("a", in, s, f.lo / scale * 2, f.hi / scale * 0.5);
    c.inputs = {with(x, std::move(specials))};
    c.kwargs = {{"func", py_str(f.name)}, {"out", py_str(dt_name(out))}};
    Json j;
    j.s("func", f.name);
    if (bias) {
      c.inputs.push_back(ranged ? in_uniform("bias", DType::kFloat32, {s[0], 1}, 0.0, f.lo)
                                : in_uniform("bias", DType::kFloat32, {s[0], 1}, -0.05 * span, 0.05 * span));
      j.b("bias", true);
    }
    if (scale_tile) {
      c.inputs.push_back(in_uniform("scale_tile", DType::kFloat32, {s[0], 1}, 0.5, 1.0));
      j.b("scale_tile", true);
    } else {
      c.kwargs["scale"] = py_num(scale);
      j.n("scale", scale);
    }
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = f.transcendental ? tol_transc(out) : tol_arith(out);
    t.add(c);
  };
  for (const ActFunc& f : act_funcs()) {
    const std::string n = std::string("activation_") + f.name + "_";
    act(n + "fp32_" + shape_tag(kBig), f, DType::kFloat32, DType::kFloat32, kBig, 1.5, true, {});
    act(n + "bf16_128x64", f, DType::kBFloat16, DType::kBFloat16, {128, 64}, 0.75, true, {});
    if (f.all_reals) {
      std::vector<double> sp = kNanInf;
      sp.push_back(-1e4);
      sp.push_back(1e4);
      act(n + "fp32_specials_7x64", f, DType::kFloat32, DType::kFloat32, {7, 64}, 1.0, false, sp);
    }
  }
  for (const char* name : {"exp", "tanh", "gelu", "silu", "sigmoid", "square", "rsqrt", "sin"}) {
    const ActFunc& f = *std::find_if(act_funcs().begin(), act_funcs().end(),
                                     [&](const ActFunc& a) { return std::string(a.name) == name; });
    act(std::string("activation_") + name + "_fp16_7x64", f, DType::kFloat16, DType::kFloat16, {7, 64}, 1.0, true, {});
    act(std::string("activation_") + name + "_fp32_to_bf16_128x64", f, DType::kFloat32, DType::kBFloat16, {128, 64},
        1.0, false, {});
  }
  const ActFunc& exp_f = act_funcs()[1];
  for (const Shape& s : kShapeSweep)
    act("activation_exp_fp32_" + shape_tag(s), exp_f, DType::kFloat32, DType::kFloat32, s, 1.0, s.size() == 2, {});
  act("activation_exp_scale_tile_fp32_128x64", exp_f, DType::kFloat32, DType::kFloat32, {128, 64}, 1.0, true, {}, true);
  act("activation_copy_scale_tile_bf16_128x64", act_funcs()[0], DType::kBFloat16, DType::kBFloat16, {128, 64}, 1.0,
      false, {}, true);
  // An integer input: cast to float32 by the engine.
  {
    OpCase c = make("activation_exp_i8_to_fp32_128x64", "nisa.activation(op=exp)", "activation", "activation");
    c.inputs = {in_ints("a", DType::kInt8, {128, 64}, -20, 20)};
    c.kwargs = {{"func", py_str("exp")}, {"out", py_str("float32")}};
    c.ref_params = Json().s("func", "exp").str();
    c.outs = {DType::kFloat32};
    c.tol = tol_transc(DType::kFloat32);
    t.add(c);
  }
}

void add_activation_reduce(Table& t) {
  auto ar = [&](const std::string& name, const char* func, DType in, DType out, const Shape& s, bool bias, double lo,
                double hi) {
    OpCase c = make(name, std::string("nisa.activation_reduce(op=") + func + ", reduce_op=add)", "activation_reduce",
                    "activation");
    c.inputs = {in_uniform("a", in, s, lo, hi)};
    c.kwargs = {{"func", py_str(func)}, {"out", py_str(dt_name(out))}, {"red", py_str("float32")}, {"scale", "0.5"}};
    Json j;
    j.s("func", func).n("scale", 0.5).b("reduce", true);
    if (bias) {
      c.inputs.push_back(in_uniform("bias", DType::kFloat32, {s[0], 1}, -1, 1));
      j.b("bias", true);
    }
    c.ref_params = j.str();
    c.outs = {out, DType::kFloat32};
    c.tol = tol_transc(out);
    t.add(c);
  };
  ar("activation_reduce_exp_fp32_128x512", "exp", DType::kFloat32, DType::kFloat32, kBig, true, -8, 8);
  ar("activation_reduce_tanh_fp32_7x3", "tanh", DType::kFloat32, DType::kFloat32, {7, 3}, false, -4, 4);
  ar("activation_reduce_exp_bf16_128x64", "exp", DType::kBFloat16, DType::kBFloat16, {128, 64}, true, -4, 4);
  ar("activation_reduce_square_fp32_128x4x16", "square", DType::kFloat32, DType::kFloat32, {128, 4, 16}, false, -3, 3);
}

void add_nl_unary(Table& t) {
  // nl.<func>(x): the same Scalar-engine activation, default dtype = the input's (float32 for ints).
  for (const ActFunc& f : act_funcs()) {
    if (std::string(f.name) == "copy") continue;
    OpCase c = make(std::string("nl_") + f.name + "_fp32_7x64", std::string("nl.") + f.name, "nl_unary", "activation");
    InputSpec x = f.lo > 0 ? in_uniform("a", DType::kFloat32, {7, 64}, f.lo * 2, f.hi / 2)
                           : in_uniform("a", DType::kFloat32, {7, 64}, f.lo * 0.9, f.hi * 0.9);
    c.inputs = {x};
    c.kwargs = {{"func", py_str(f.name)}};
    c.ref_params = Json().s("func", f.name).str();
    c.outs = {DType::kFloat32};
    c.tol = f.transcendental ? tol_transc(DType::kFloat32) : tol_arith(DType::kFloat32);
    t.add(c);
  }
  // nl.sin / nl.cos reduce the range first: exact far outside [-pi, pi] (the NKI doc).
  for (const char* fn : {"sin", "cos"}) {
    OpCase c =
        make(std::string("nl_") + fn + "_wide_range_fp32_128x64", std::string("nl.") + fn, "nl_unary", "activation");
    c.inputs = {in_uniform("a", DType::kFloat32, {128, 64}, -50, 50)};
    c.kwargs = {{"func", py_str(fn)}};
    c.ref_params = Json().s("func", fn).str();
    c.outs = {DType::kFloat32};
    c.tol = tol_transc(DType::kFloat32);
    t.add(c);
  }
  {
    OpCase c = make("nl_exp_bf16_128x512", "nl.exp", "nl_unary", "activation");
    c.inputs = {in_uniform("a", DType::kBFloat16, kBig, -10, 10)};
    c.kwargs = {{"func", py_str("exp")}};
    c.ref_params = Json().s("func", "exp").str();
    c.outs = {DType::kBFloat16};
    c.tol = tol_transc(DType::kBFloat16);
    t.add(c);
  }
  {
    OpCase c = make("nl_tanh_i32_to_fp32_128x64", "nl.tanh", "nl_unary", "activation");
    c.inputs = {in_ints("a", DType::kInt32, {128, 64}, -5, 5)};
    c.kwargs = {{"func", py_str("tanh")}};
    c.ref_params = Json().s("func", "tanh").str();
    c.outs = {DType::kFloat32};
    c.tol = tol_transc(DType::kFloat32);
    t.add(c);
  }
}

// -- nl.* binary ops with broadcasting and scalars --------------------------------------------------

void add_nl_binary(Table& t) {
  struct Side {
    std::optional<InputSpec> tile;
    std::optional<double> number;
  };
  auto nb = [&](const std::string& name, const std::string& op, Side x, Side y, std::optional<DType> dtype_arg,
                DType out, Tol tol, const std::string& mode = "float") {
    OpCase c = make(name, "nl." + op, "nl_binary", "binary");
    c.kwargs = {{"op", py_str(op)}};
    if (dtype_arg) c.kwargs["out"] = py_str(dt_name(*dtype_arg));
    Json j;
    j.s("op", op).s("mode", mode);
    if (x.tile) c.inputs.push_back(*x.tile);
    if (y.tile) c.inputs.push_back(*y.tile);
    if (x.number) {
      c.kwargs["sa"] = py_num(*x.number);
      j.n("sa", *x.number);
    }
    if (y.number) {
      c.kwargs["sb"] = py_num(*y.number);
      j.n("sb", *y.number);
    }
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol;
    t.add(c);
  };
  const DType f = DType::kFloat32, bf = DType::kBFloat16, h = DType::kFloat16;
  const Shape s = {128, 64};
  auto tile = [](const std::string& n, DType d, Shape sh, double scale = 1.0) {
    return Side{in_normal(n, d, std::move(sh), scale), std::nullopt};
  };
  auto num = [](double v) { return Side{std::nullopt, v}; };
  // Free-axis broadcast of a [P, 1] operand, either side.
  nb("nl_add_bcast_col_fp32_128x64", "add", tile("a", f, s), tile("b", f, {128, 1}), std::nullopt, f, tol_arith(f));
  nb("nl_subtract_bcast_col_lhs_fp32_128x64", "subtract", tile("a", f, {128, 1}), tile("b", f, s), std::nullopt, f,
     tol_arith(f));
  nb("nl_multiply_bcast_col_bf16_7x512", "multiply", tile("a", bf, {7, 512}), tile("b", bf, {7, 1}), std::nullopt, bf,
     tol_arith(bf));
  // Partition-axis broadcast of a [1, F] operand (nl.* allows it; the compiler broadcasts on PE).
  nb("nl_multiply_bcast_row_fp32_128x64", "multiply", tile("a", f, s), tile("b", f, {1, 64}), std::nullopt, f,
     tol_arith(f));
  nb("nl_maximum_bcast_row_lhs_fp32_7x64", "maximum", tile("a", f, {1, 64}), tile("b", f, {7, 64}), std::nullopt, f,
     tol_arith(f));
  // Python numbers: weakly typed (float -> float32), either side.
  nb("nl_add_number_fp32_128x64", "add", tile("a", f, s), num(2.5), std::nullopt, f, tol_arith(f));
  nb("nl_subtract_number_lhs_fp32_128x64", "subtract", num(1.0), tile("b", f, s), std::nullopt, f, tol_arith(f));
  nb("nl_divide_number_lhs_fp32_128x64", "divide", num(3.0), tile("b", f, s), std::nullopt, f, tol_arith(f));
  nb("nl_power_number_fp32_128x64", "power", Side{in_uniform("a", f, s, 0.01, 3.0), std::nullopt}, num(2.5),
     std::nullopt, f, tol_transc(f));
  nb("nl_maximum_number_bf16_128x64", "maximum", tile("a", bf, s), num(0.0), bf, bf, tol_arith(bf));
  // Type promotion of the default output (nki-spec 3.9).
  nb("nl_add_bf16_bf16_default_bf16_128x64", "add", tile("a", bf, s), tile("b", bf, s), std::nullopt, bf,
     tol_arith(bf));
  nb("nl_add_fp16_bf16_default_fp32_128x64", "add", tile("a", h, s), tile("b", bf, s), std::nullopt, f, tol_arith(f));
  nb("nl_multiply_bf16_number_default_fp32_128x64", "multiply", tile("a", bf, s), num(1.1), std::nullopt, f,
     tol_arith(f));
  nb("nl_add_fp16_number_dtype_fp16_128x64", "add", tile("a", h, s, 100.0), num(0.1), h, h, tol_arith(h));
  nb("nl_add_i32_i32_default_i32_128x64", "add", Side{in_ints("a", DType::kInt32, s, -1000000, 1000000), std::nullopt},
     Side{in_ints("b", DType::kInt32, s, -1000000, 1000000), std::nullopt}, std::nullopt, DType::kInt32, tol_exact(),
     "int");
  nb("nl_add_i8_u8_default_i16_128x64", "add", Side{in_ints("a", DType::kInt8, s, -128, 127), std::nullopt},
     Side{in_ints("b", DType::kUInt8, s, 0, 255), std::nullopt}, std::nullopt, DType::kInt16, tol_exact());
  nb("nl_multiply_u8_float_default_fp32_128x64", "multiply", Side{in_ints("a", DType::kUInt8, s, 0, 255), std::nullopt},
     num(0.5), std::nullopt, f, tol_arith(f));
  {  // a Python int is weakly typed int32: (int8, 2) gives int32
    OpCase c = make("nl_add_i8_int_default_i32_128x64", "nl.add", "nl_binary", "binary");
    c.inputs = {in_ints("a", DType::kInt8, s, -128, 127)};
    c.kwargs = {{"op", py_str("add")}, {"sb", "2"}};
    c.ref_params = Json().s("op", "add").n("sb", 2).str();
    c.outs = {DType::kInt32};
    c.tol = tol_exact();
    t.add(c);
  }
  nb("nl_greater_fp32_dtype_u8_128x64", "greater",
     Side{InputSpec{"a", f, s, Dist::kSmallInts, -2, 2, {}}, std::nullopt},
     Side{InputSpec{"b", f, s, Dist::kSmallInts, -2, 2, {}}, std::nullopt}, DType::kUInt8, DType::kUInt8, tol_exact());
  nb("nl_bitwise_xor_i32_128x64", "bitwise_xor",
     Side{in_ints("a", DType::kInt32, s, -2147483648.0, 2147483647.0), std::nullopt},
     Side{in_ints("b", DType::kInt32, s, -2147483648.0, 2147483647.0), std::nullopt}, std::nullopt, DType::kInt32,
     tol_exact(), "bitvec");
  nb("nl_divide_fp32_128x3x4", "divide", tile("a", f, {128, 3, 4}), tile("b", f, {128, 3, 4}), std::nullopt, f,
     tol_arith(f));
}

// -- reductions -------------------------------------------------------------------------------------

void add_reduce(Table& t) {
  auto red = [&](const std::string& name, const std::string& op, InputSpec x, std::vector<int64_t> axes, bool keepdims,
                 bool negate, DType out) {
    OpCase c = make(name, "nisa.tensor_reduce(op=" + op + ")", "tensor_reduce", "reduce");
    c.inputs = {std::move(x)};
    c.kwargs = {{"op", py_str(op)},
                {"out", py_str(dt_name(out))},
                {"axis", py_ints(axes)},
                {"keepdims", py_bool(keepdims)},
                {"negate", py_bool(negate)}};
    c.ref_params = Json().s("op", op).ints("axes", axes).b("keepdims", keepdims).b("negate", negate).str();
    c.outs = {out};
    c.tol = tol_arith(out);
    t.add(c);
  };
  for (DType d : {DType::kFloat32, DType::kBFloat16}) {
    red("tensor_reduce_add_" + dt_tag(d) + "_128x512", "add", with(in_normal("a", d, kBig, 1.0, 0.5), edges(d)), {1},
        false, false, d);
    red("tensor_reduce_maximum_" + dt_tag(d) + "_128x512", "maximum", with(in_normal("a", d, kBig), edges(d)), {1},
        false, false, d);
    red("tensor_reduce_minimum_" + dt_tag(d) + "_128x512", "minimum", with(in_normal("a", d, kBig), edges(d)), {1},
        false, false, d);
    red("tensor_reduce_multiply_" + dt_tag(d) + "_128x64", "multiply", in_uniform("a", d, {128, 64}, 0.9, 1.1), {1},
        false, false, d);
  }
  const Shape s3 = {128, 4, 16};
  red("tensor_reduce_add_last_axis_fp32_128x4x16", "add", in_normal("a", DType::kFloat32, s3), {2}, false, false,
      DType::kFloat32);
  red("tensor_reduce_add_two_axes_fp32_128x4x16", "add", in_normal("a", DType::kFloat32, s3), {1, 2}, false, false,
      DType::kFloat32);
  red("tensor_reduce_maximum_keepdims_fp32_128x4x16", "maximum", in_normal("a", DType::kFloat32, s3), {2}, true, false,
      DType::kFloat32);
  red("tensor_reduce_add_negate_fp32_128x512", "add", in_normal("a", DType::kFloat32, kBig), {1}, false, true,
      DType::kFloat32);
  red("tensor_reduce_maximum_negate_keepdims_bf16_7x64", "maximum", in_normal("a", DType::kBFloat16, {7, 64}), {1},
      true, true, DType::kBFloat16);
  red("tensor_reduce_add_bf16_to_fp32_128x512", "add", in_normal("a", DType::kBFloat16, kBig, 1.0, 2.0), {1}, false,
      false, DType::kFloat32);
  red("tensor_reduce_add_fp16_overflow_to_fp32_7x64", "add", in_uniform("a", DType::kFloat16, {7, 64}, 30000, 65000),
      {1}, false, false, DType::kFloat32);
  for (const Shape& s : {Shape{1, 1}, Shape{7, 3}, Shape{128, 1}})
    red("tensor_reduce_add_fp32_" + shape_tag(s), "add", in_normal("a", DType::kFloat32, s), {1}, false, false,
        DType::kFloat32);
  red("tensor_reduce_maximum_fp32_specials_7x64", "maximum", with(in_normal("a", DType::kFloat32, {7, 64}), kNanInf),
      {1}, false, false, DType::kFloat32);

  auto nlr = [&](const std::string& name, const std::string& fn, InputSpec x, std::vector<int64_t> axes, bool keepdims,
                 std::optional<DType> dtype_arg, DType out) {
    OpCase c = make(name, "nl." + fn, "nl_reduce", "reduce");
    c.inputs = {std::move(x)};
    c.kwargs = {{"fn", py_str(fn)},
                {"axis", axes.size() == 1 ? std::to_string(axes[0]) : py_ints(axes)},
                {"keepdims", py_bool(keepdims)}};
    if (dtype_arg) c.kwargs["out"] = py_str(dt_name(*dtype_arg));
    const std::string op = fn == "sum"    ? "add"
                           : fn == "max"  ? "maximum"
                           : fn == "min"  ? "minimum"
                           : fn == "prod" ? "multiply"
                                          : "mean";
    c.ref_params = Json().s("op", op).ints("axes", axes).b("keepdims", keepdims).str();
    c.outs = {out};
    c.tol = tol_arith(out);
    t.add(c);
  };
  for (const char* fn : {"sum", "max", "min", "mean"}) {
    nlr(std::string("nl_") + fn + "_fp32_128x512", fn, in_normal("a", DType::kFloat32, kBig, 2.0, 1.0), {1}, false,
        std::nullopt, DType::kFloat32);
    nlr(std::string("nl_") + fn + "_keepdims_bf16_128x64", fn, in_normal("a", DType::kBFloat16, {128, 64}, 2.0, 1.0),
        {1}, true, std::nullopt, DType::kBFloat16);
  }
  nlr("nl_prod_fp32_7x64", "prod", in_uniform("a", DType::kFloat32, {7, 64}, 0.8, 1.25), {1}, false, std::nullopt,
      DType::kFloat32);
  nlr("nl_sum_two_axes_fp32_128x4x16", "sum", in_normal("a", DType::kFloat32, {128, 4, 16}), {1, 2}, false,
      std::nullopt, DType::kFloat32);
  nlr("nl_mean_i32_to_fp32_128x64", "mean", in_ints("a", DType::kInt32, {128, 64}, -1000, 1000), {1}, false,
      std::nullopt, DType::kFloat32);
  nlr("nl_sum_bf16_dtype_fp32_128x512", "sum", in_normal("a", DType::kBFloat16, kBig, 1.0, 3.0), {1}, false,
      DType::kFloat32, DType::kFloat32);
}

// -- matmul and transpose ---------------------------------------------------------------------------

void add_matmul(Table& t) {
  struct Group {
    int64_t k;
    std::string mode;
  };
  auto mm = [&](const std::string& name, DType ds, DType dm, int64_t m, int64_t n, std::vector<Group> groups, DType out,
                double scale, bool legacy_too, std::vector<double> specials = {}) {
    OpCase c = make(name, "nisa.nc_matmul", "nc_matmul", "matmul");
    std::vector<std::string> modes;
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::string i = std::to_string(g);
      c.inputs.push_back(with(in_normal("s" + i, ds, {groups[g].k, m}, scale), specials));
      c.inputs.push_back(with(in_normal("m" + i, dm, {groups[g].k, n}, scale), specials));
      modes.push_back(groups[g].mode);
    }
    std::string py = "(", js = "[";
    for (size_t g = 0; g < modes.size(); ++g) {
      py += py_str(modes[g]) + ", ";
      js += (g ? "," : "") + ("\"" + modes[g] + "\"");
    }
    c.kwargs = {{"modes", py + ")"}, {"out", py_str(dt_name(out))}};
    c.ref_params = Json().raw("modes", js + "]").str();
    c.outs = {out};
    c.tol = tol_arith(out);
    t.add(c, legacy_too);
  };
  const DType f = DType::kFloat32, bf = DType::kBFloat16, h = DType::kFloat16;
  for (auto [k, m, n] : std::vector<std::array<int64_t, 3>>{{128, 128, 512},
                                                            {1, 1, 1},
                                                            {7, 7, 7},
                                                            {128, 1, 512},
                                                            {1, 128, 512},
                                                            {128, 128, 1},
                                                            {64, 7, 3},
                                                            {7, 128, 128}})
    mm("nc_matmul_fp32_k" + std::to_string(k) + "_m" + std::to_string(m) + "_n" + std::to_string(n), f, f, m, n,
       {{k, "auto"}}, f, 1.0, true);
  for (auto [k, m, n] : std::vector<std::array<int64_t, 3>>{{128, 128, 512}, {7, 1, 64}, {128, 7, 3}}) {
    const std::string shape = "_k" + std::to_string(k) + "_m" + std::to_string(m) + "_n" + std::to_string(n);
    mm("nc_matmul_bf16" + shape, bf, bf, m, n, {{k, "auto"}}, f, 1.0, true);
    mm("nc_matmul_fp16" + shape, h, h, m, n, {{k, "auto"}}, f, 1.0, true);
  }
  // float16 products beyond float16's range: the PE multiplies and accumulates in float32.
  mm("nc_matmul_fp16_large_k128_m64_n64", h, h, 64, 64, {{128, "auto"}}, f, 3e3, true, {60000.0, -60000.0});
  mm("nc_matmul_bf16_x_fp16_k64_m32_n128", bf, h, 32, 128, {{64, "auto"}}, f, 1.0, true);
  mm("nc_matmul_fp8e4m3_k128_m32_n64", DType::kFloat8E4M3, DType::kFloat8E4M3, 32, 64, {{128, "auto"}}, f, 4.0, true);
  mm("nc_matmul_fp32_to_bf16_k128_m128_n512", f, f, 128, 512, {{128, "auto"}}, bf, 1.0, true);
  // Accumulation groups: the first write overwrites, later ones add; explicit flags (current API).
  mm("nc_matmul_accumulate_auto2_fp32_m128_n512", f, f, 128, 512, {{128, "auto"}, {128, "auto"}}, f, 1.0, true);
  mm("nc_matmul_accumulate_auto3_bf16_m64_n256", bf, bf, 64, 256, {{128, "auto"}, {7, "auto"}, {64, "auto"}}, f, 1.0,
     true);
  mm("nc_matmul_accumulate_over_acc_fp32_m32_n64", f, f, 32, 64, {{64, "over"}, {32, "acc"}}, f, 1.0, false);
  mm("nc_matmul_accumulate_auto_then_over_fp32_m32_n64", f, f, 32, 64, {{64, "auto"}, {16, "over"}}, f, 1.0, false);
  mm("nc_matmul_accumulate_over_acc_acc_bf16_m128_n512", bf, bf, 128, 512, {{128, "over"}, {128, "acc"}, {128, "acc"}},
     f, 1.0, false);

  // Double-row FP8 (trn2): stationary [128, 2, M], moving [128, 2, N], K = 256 over the partitions
  // and the size-2 axis; the oracle flattens both to [256, free].
  auto dr = [&](const std::string& name, DType ds, DType dm, int64_t m, int64_t n, double scale) {
    OpCase c = make(name, "nisa.nc_matmul(perf_mode=double_row)", "nc_matmul_double_row", "matmul");
    c.inputs = {in_normal("s0", ds, {128, 2, m}, scale), in_normal("m0", dm, {128, 2, n}, scale)};
    c.ref_params = Json().raw("modes", "[\"auto\"]").b("double_row", true).str();
    c.outs = {f};
    c.tol = tol_arith(f);
    c.target = "trn2";
    t.add(c);
  };
  dr("nc_matmul_double_row_fp8e4m3_m128_n512", DType::kFloat8E4M3, DType::kFloat8E4M3, 128, 512, 4.0);
  dr("nc_matmul_double_row_fp8e5m2_x_e4m3_m7_n3", DType::kFloat8E5M2, DType::kFloat8E4M3, 7, 3, 4.0);

  auto nlm = [&](const std::string& name, DType d, int64_t k, int64_t m, int64_t n, bool transpose_x) {
    OpCase c =
        make(name, "nl.matmul(transpose_x=" + std::string(transpose_x ? "True" : "False") + ")", "nl_matmul", "matmul");
    c.inputs = {in_normal("x", d, transpose_x ? Shape{k, m} : Shape{m, k}), in_normal("y", d, {k, n})};
    c.kwargs = {{"transpose_x", py_bool(transpose_x)}};
    c.ref_params = Json().raw("modes", "[\"auto\"]").b("nl", true).b("transpose_x", transpose_x).str();
    c.outs = {DType::kFloat32};
    c.tol = tol_arith(DType::kFloat32);
    t.add(c);
  };
  nlm("nl_matmul_transpose_x_fp32_k128_m128_n512", f, 128, 128, 512, true);
  nlm("nl_matmul_fp32_k128_m128_n512", f, 128, 128, 512, false);
  nlm("nl_matmul_transpose_x_bf16_k64_m7_n3", bf, 64, 7, 3, true);
  nlm("nl_matmul_bf16_k7_m64_n128", bf, 7, 64, 128, false);
}

void add_transpose(Table& t) {
  auto tr = [&](const std::string& name, DType d, const Shape& s, const std::string& engine, bool enum_api,
                std::vector<double> specials = {}) {
    OpCase c = make(name, "nisa.nc_transpose(engine=" + engine + ")", "nc_transpose", "transpose");
    c.inputs = {with(d == DType::kInt32 ? in_ints("a", d, s, -2147483648.0, 2147483647.0) : in_normal("a", d, s, 10.0),
                     std::move(specials))};
    c.kwargs = {{"engine", py_str(engine)}};
    if (enum_api) c.kwargs["enum"] = "True";
    c.ref_params = "{}";
    c.outs = {d};
    c.tol = tol_exact();
    t.add(c, !enum_api);
  };
  for (DType d : {DType::kFloat32, DType::kBFloat16, DType::kFloat16})
    for (const Shape& s : {Shape{128, 128}, Shape{7, 64}, Shape{1, 128}, Shape{128, 1}})
      tr("nc_transpose_tensor_" + dt_tag(d) + "_" + shape_tag(s), d, s, "tensor", false);
  tr("nc_transpose_tensor_i32_64x32", DType::kInt32, {64, 32}, "tensor", false);
  for (DType d : {DType::kFloat32, DType::kBFloat16, DType::kInt32})
    for (const Shape& s : {Shape{32, 32}, Shape{7, 3}, Shape{1, 1}, Shape{32, 1}})
      tr("nc_transpose_vector_" + dt_tag(d) + "_" + shape_tag(s), d, s, "vector", false);
  tr("nc_transpose_vector_fp32_specials_16x16", DType::kFloat32, {16, 16}, "vector", false, kNanInf);
  tr("nc_transpose_vector_engine_enum_fp32_32x8", DType::kFloat32, {32, 8}, "vector", true);

  for (const Shape& s : {Shape{128, 96}, Shape{32, 32}, Shape{7, 3}}) {
    for (DType d : {DType::kFloat32, DType::kBFloat16}) {
      OpCase c = make("nl_transpose_" + dt_tag(d) + "_" + shape_tag(s), "nl.transpose", "nl_transpose", "transpose");
      c.inputs = {in_normal("a", d, s, 10.0)};
      c.ref_params = "{}";
      c.outs = {d};
      c.tol = tol_exact();
      t.add(c);
    }
  }
}

// -- copies, casts, memset, iota, affine_select ----------------------------------------------------

void add_copies(Table& t) {
  auto tc = [&](const std::string& name, const std::string& entry, InputSpec x, DType out,
                std::optional<std::string> engine = std::nullopt, bool enum_api = false) {
    OpCase c = make(name, entry == "nl_copy" ? "nl.copy" : "nisa.tensor_copy", entry, "copy");
    c.inputs = {std::move(x)};
    c.kwargs = {{"out", py_str(dt_name(out))}};
    if (engine) c.kwargs["engine"] = py_str(*engine);
    if (enum_api) c.kwargs["enum"] = "True";
    c.ref_params = "{}";
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c, !enum_api);
  };
  const Shape s = {128, 64};
  const DType f = DType::kFloat32;
  const std::vector<DType> narrow = {DType::kBFloat16, DType::kFloat16, DType::kFloat8E4M3, DType::kFloat8E5M2,
                                     DType::kInt8,     DType::kInt32,   DType::kUInt8,      DType::kFloat32};
  for (DType d : narrow) {
    const double scale = d == DType::kFloat8E4M3 ? 50.0 : d == DType::kInt8 ? 40.0 : d == DType::kUInt8 ? 100.0 : 1e3;
    tc("tensor_copy_fp32_to_" + dt_tag(d) + "_128x64", "tensor_copy",
       with(in_normal("a", f, s, scale), {0.5, -0.5, 1.5, 2.5, -2.5, -0.0}), d);
  }
  for (DType d : narrow) {
    if (d == DType::kFloat32) continue;
    InputSpec x = is_float(d) ? in_normal("a", d, s, 10.0) : in_ints("a", d, s, int_range(d).lo, int_range(d).hi);
    tc("tensor_copy_" + dt_tag(d) + "_to_fp32_128x64", "tensor_copy", x, f);
  }
  tc("tensor_copy_i32_to_i32_large_128x64", "tensor_copy",
     with(in_ints("a", DType::kInt32, s, -2147483648.0, 2147483647.0), edges(DType::kInt32)), DType::kInt32);
  tc("tensor_copy_i32_to_fp32_large_128x64", "tensor_copy",
     with(in_ints("a", DType::kInt32, s, -2147483648.0, 2147483647.0), edges(DType::kInt32)), f);
  tc("tensor_copy_bf16_to_fp16_128x64", "tensor_copy", in_normal("a", DType::kBFloat16, s, 1e4), DType::kFloat16);
  tc("tensor_copy_fp16_to_bf16_128x64", "tensor_copy", with(in_normal("a", DType::kFloat16, s, 1e3), {65504.0, 6e-8}),
     DType::kBFloat16);
  tc("tensor_copy_fp16_to_e5m2_128x64", "tensor_copy",
     with(in_normal("a", DType::kFloat16, s, 1e4), {65504.0, 57344.0, 61440.0}), DType::kFloat8E5M2);
  // Rounding ties, overflow, subnormals, NaN and inf on the way down.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  tc("tensor_copy_fp32_to_bf16_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}),
          {1.00390625, 1.01171875, -1.00390625, 3.4e38, kF32Max, 1e-40, nan, inf, -inf, -0.0, 1.1754943508222875e-38}),
     DType::kBFloat16);
  tc("tensor_copy_fp32_to_fp16_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}),
          {65504.0, 65519.0, 65520.0, -65520.0, 1e-7, 6e-8, 2.98e-8, 1e-9, nan, inf, -0.0, 1.00048828125}),
     DType::kFloat16);
  tc("tensor_copy_fp32_to_e4m3_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}), {240.0, 247.0, 248.0, 300.0, -1000.0, 0.001953125, 0.0009765625, nan, inf, -0.0}),
     DType::kFloat8E4M3);
  tc("tensor_copy_fp32_to_e5m2_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}), {57344.0, 61439.0, 61440.0, 1e6, 1.52587890625e-05, nan, -inf}),
     DType::kFloat8E5M2);
  tc("tensor_copy_fp32_to_i8_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}, 100.0), {127.5, 128.0, 300.0, -128.9, -129.0, -1e10, 0.99, -0.99, nan, inf, -inf}),
     DType::kInt8);
  tc("tensor_copy_fp32_to_i32_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}, 1e9),
          {2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 1e20, 16777217.0, nan, inf, -inf}),
     DType::kInt32);
  tc("tensor_copy_fp32_to_u8_specials_7x64", "tensor_copy",
     with(in_normal("a", f, {7, 64}, 100.0), {-1.0, -0.5, 255.5, 256.0, 1e9, nan}), DType::kUInt8);
  tc("tensor_copy_bf16_to_bf16_specials_7x64", "tensor_copy", with(in_normal("a", DType::kBFloat16, {7, 64}), kNanInf),
     DType::kBFloat16);
  // The engines.
  tc("tensor_copy_gpsimd_fp32_to_bf16_128x64", "tensor_copy", in_normal("a", f, s), DType::kBFloat16, "gpsimd");
  tc("tensor_copy_vector_i32_to_i32_128x64", "tensor_copy", in_ints("a", DType::kInt32, s, -2147483648.0, 2147483647.0),
     DType::kInt32, "vector");
  tc("tensor_copy_engine_enum_fp32_to_bf16_128x64", "tensor_copy", in_normal("a", f, s), DType::kBFloat16, "vector",
     true);
  tc("nl_copy_fp32_to_bf16_128x512", "nl_copy", in_normal("a", f, kBig), DType::kBFloat16);
  tc("nl_copy_bf16_to_fp32_128x4x16", "nl_copy", in_normal("a", DType::kBFloat16, {128, 4, 16}), f);
  tc("nl_copy_fp32_to_i32_7x64", "nl_copy", in_normal("a", f, {7, 64}, 1e4), DType::kInt32);
}

// A 2-D slice (start, stop, step per axis): as the kernels' `index` argument, and as the NumPy index
// string the oracle applies ("[start:stop:step, start:stop:step]").
using Index2 = std::array<std::array<int64_t, 3>, 2>;
void set_index(OpCase& c, Json& j, const Index2& ix) {
  std::string py = "(", np = "[";
  for (size_t a = 0; a < 2; ++a) {
    py += (a ? ", (" : "(") + std::to_string(ix[a][0]) + ", " + std::to_string(ix[a][1]) + ", " +
          std::to_string(ix[a][2]) + ")";
    np += (a ? ", " : "") + std::to_string(ix[a][0]) + ":" + std::to_string(ix[a][1]) + ":" + std::to_string(ix[a][2]);
  }
  c.kwargs["index"] = py + ")";
  j.s("index", np + "]");
}

void add_dma(Table& t) {
  auto dma = [&](const std::string& name, const std::string& entry, const std::string& what, InputSpec x, DType out,
                 std::optional<Index2> index, std::optional<Shape> dst_shape, bool legacy_too) {
    OpCase c = make(name, what, entry, "copy");
    Json j;
    if (index) {
      set_index(c, j, *index);
    }
    if (dst_shape) {
      c.kwargs["dst_shape"] = py_ints(*dst_shape);
      j.ints("reshape", *dst_shape);
    }
    c.inputs = {std::move(x)};
    c.kwargs["out"] = py_str(dt_name(out));
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c, legacy_too);
  };
  const DType f = DType::kFloat32, bf = DType::kBFloat16;
  // nisa.dma_copy HBM -> SBUF (then stored back): casts, strides along each axis, 3-D, reshapes.
  dma("dma_copy_fp32_to_bf16_128x512", "dma_copy", "nisa.dma_copy", in_normal("a", f, kBig), bf, std::nullopt,
      std::nullopt, true);
  dma("dma_copy_bf16_to_fp32_128x64", "dma_copy", "nisa.dma_copy", in_normal("a", bf, {128, 64}), f, std::nullopt,
      std::nullopt, true);
  dma("dma_copy_fp32_to_fp16_overflow_7x64", "dma_copy", "nisa.dma_copy",
      with(in_normal("a", f, {7, 64}, 3e4), {65520.0, 1e6, -1e6, 65504.0}), DType::kFloat16, std::nullopt, std::nullopt,
      true);
  dma("dma_copy_i32_exact_128x64", "dma_copy", "nisa.dma_copy",
      with(in_ints("a", DType::kInt32, {128, 64}, -2147483648.0, 2147483647.0), edges(DType::kInt32)), DType::kInt32,
      std::nullopt, std::nullopt, true);
  dma("dma_copy_free_step2_fp32_128x512", "dma_copy", "nisa.dma_copy", in_normal("a", f, kBig), f,
      Index2{{{0, 128, 1}, {0, 512, 2}}}, std::nullopt, true);
  dma("dma_copy_partition_step3_offset_fp32_22x64", "dma_copy", "nisa.dma_copy", in_normal("a", f, {22, 64}), f,
      Index2{{{1, 22, 3}, {5, 64, 1}}}, std::nullopt, true);
  dma("dma_copy_both_steps_cast_bf16_64x96", "dma_copy", "nisa.dma_copy", in_normal("a", f, {64, 96}), bf,
      Index2{{{0, 64, 2}, {3, 96, 3}}}, std::nullopt, true);
  dma("dma_copy_3d_fp32_128x4x16", "dma_copy", "nisa.dma_copy", in_normal("a", f, {128, 4, 16}), f, std::nullopt,
      std::nullopt, true);
  dma("dma_copy_reshape_dst_fp32_128x64_to_128x4x16", "dma_copy", "nisa.dma_copy", in_normal("a", f, {128, 64}), f,
      std::nullopt, Shape{128, 4, 16}, false);
  // SBUF -> HBM with the cast on the way out; strided HBM destinations.
  for (auto [from, to] : std::vector<std::pair<DType, DType>>{{f, bf}, {bf, f}, {f, DType::kInt32}}) {
    OpCase c = make("dma_store_" + dt_tag(from) + "_to_" + dt_tag(to) + "_128x64",
                    "nisa.dma_copy / nl.store (SBUF -> HBM)", "dma_store", "copy");
    c.inputs = {in_normal("a", from, {128, 64}, to == DType::kInt32 ? 1e5 : 3.0)};
    c.kwargs = {{"out", py_str(dt_name(to))}};
    c.ref_params = "{}";
    c.outs = {to};
    c.tol = tol_exact();
    t.add(c);
  }
  {
    OpCase c = make("dma_interleave_store_fp32_128x256", "strided HBM destinations", "dma_interleave", "copy");
    c.inputs = {in_normal("a", f, {128, 256}), in_normal("b", f, {128, 256})};
    c.ref_params = Json().b("interleave", true).str();
    c.outs = {f};
    c.tol = tol_exact();
    t.add(c);
  }
  // nl.load / nl.store, with a cast on load and strided index tiles.
  auto ls = [&](const std::string& name, InputSpec x, std::optional<DType> load, DType out,
                std::optional<Index2> index) {
    OpCase c = make(name, "nl.load / nl.store", "nl_load_store", "copy");
    Json j;
    if (load) c.kwargs["load_dtype"] = py_str(dt_name(*load));
    if (index) {
      set_index(c, j, *index);
    }
    c.kwargs["out"] = py_str(dt_name(out));
    const DType mid = load.value_or(x.dtype);
    // The value goes through the tile's dtype: load cast, then store cast.
    j.s("mid", dt_name(mid));
    c.inputs = {std::move(x)};
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c);
  };
  ls("nl_load_store_fp32_128x512", in_normal("a", f, kBig), std::nullopt, f, std::nullopt);
  ls("nl_load_cast_bf16_store_fp32_128x64", in_normal("a", f, {128, 64}), bf, f, std::nullopt);
  ls("nl_load_store_cast_fp16_7x64", with(in_normal("a", f, {7, 64}, 1e4), {70000.0}), std::nullopt, DType::kFloat16,
     std::nullopt);
  ls("nl_load_step2_fp32_128x512", in_normal("a", f, kBig), std::nullopt, f, Index2{{{0, 128, 1}, {1, 512, 2}}});
  ls("nl_load_partition_step2_bf16_100x64", in_normal("a", bf, {100, 64}), std::nullopt, bf,
     Index2{{{0, 100, 2}, {0, 64, 1}}});
}

void add_memset_iota_select(Table& t) {
  auto ms = [&](const std::string& name, const Shape& s, double value, DType out) {
    OpCase c = make(name, "nisa.memset", "memset", "memset");
    c.kwargs = {{"shape", py_ints(s)}, {"value", py_num(value)}, {"out", py_str(dt_name(out))}};
    if (!is_float(out)) c.kwargs["value"] = std::to_string(static_cast<int64_t>(value));
    c.ref_params = Json().n("value", value).ints("shape", s).str();
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c);
  };
  ms("memset_fp32_1p5_128x512", kBig, 1.5, DType::kFloat32);
  ms("memset_bf16_third_7x64", {7, 64}, 1.0 / 3.0, DType::kBFloat16);
  ms("memset_fp16_overflow_1x3", {1, 3}, 1e5, DType::kFloat16);
  ms("memset_fp32_negzero_128x1", {128, 1}, -0.0, DType::kFloat32);
  ms("memset_fp32_neg_big_128x4x16", {128, 4, 16}, -3.4028234663852886e38, DType::kFloat32);
  ms("memset_i32_16777217_128x64", {128, 64}, 16777217, DType::kInt32);
  ms("memset_i32_max_7x3", {7, 3}, 2147483647, DType::kInt32);
  ms("memset_i8_minus7_128x64", {128, 64}, -7, DType::kInt8);
  ms("memset_u8_200_7x64", {7, 64}, 200, DType::kUInt8);

  auto io = [&](const std::string& name, const Shape& s, std::vector<int64_t> steps, int64_t offset, int64_t cm,
                DType out, bool legacy_too) {
    OpCase c = make(name, "nisa.iota", "iota", "iota");
    std::string pattern = "[";
    for (size_t i = 0; i < steps.size(); ++i)
      pattern += (i ? ", " : "") + ("[" + std::to_string(steps[i]) + ", " + std::to_string(s[i + 1]) + "]");
    c.kwargs = {{"shape", py_ints(s)},
                {"pattern", pattern + "]"},
                {"offset", std::to_string(offset)},
                {"channel_multiplier", std::to_string(cm)},
                {"out", py_str(dt_name(out))}};
    c.ref_params = Json().ints("shape", s).ints("steps", steps).n("offset", offset).n("channel_multiplier", cm).str();
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c, legacy_too);
  };
  io("iota_i32_128x512", kBig, {1}, 0, 512, DType::kInt32, true);
  io("iota_fp32_negative_steps_7x64", {7, 64}, {-3}, 100, -1000, DType::kFloat32, true);
  io("iota_bf16_rounding_128x64", {128, 64}, {1}, 250, 64, DType::kBFloat16, true);
  io("iota_fp32_beyond_2p24_128x64", {128, 64}, {1}, 16777200, 3, DType::kFloat32, true);
  io("iota_i32_wraps_7x64", {7, 64}, {1 << 24}, 2147483000, 1 << 28, DType::kInt32, true);
  io("iota_i32_3d_128x4x16", {128, 4, 16}, {16, 1}, 7, 64, DType::kInt32, false);

  auto sel = [&](const std::string& name, InputSpec x, int64_t step, int64_t cm, int64_t offset, const std::string& cmp,
                 double on_false, DType out) {
    OpCase c = make(name, "nisa.affine_select(cmp=" + cmp + ")", "affine_select", "affine_select");
    const int64_t f = x.shape[1];
    c.kwargs = {{"pattern", "[[" + std::to_string(step) + ", " + std::to_string(f) + "]]"},
                {"channel_multiplier", std::to_string(cm)},
                {"offset", std::to_string(offset)},
                {"cmp", py_str(cmp)},
                {"on_false", py_num(on_false)},
                {"out", py_str(dt_name(out))}};
    c.ref_params = Json()
                       .ints("steps", {step})
                       .n("offset", offset)
                       .n("channel_multiplier", cm)
                       .s("cmp", cmp)
                       .n("on_false", on_false)
                       .str();
    c.inputs = {std::move(x)};
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c);
  };
  // Causal mask: keep column j of row p where p - j >= 0.
  sel("affine_select_causal_fp32_128x128", in_normal("a", DType::kFloat32, {128, 128}), -1, 1, 0, "greater_equal",
      -9984.0, DType::kFloat32);
  sel("affine_select_fp32min_bf16_128x64", in_normal("a", DType::kBFloat16, {128, 64}), -1, 1, 0, "greater_equal",
      -3.4028234663852886e38, DType::kBFloat16);
  sel("affine_select_i32_exact_7x64", in_ints("a", DType::kInt32, {7, 64}, -2147483648.0, 2147483647.0), 1, -8, 3,
      "less", -5.0, DType::kInt32);
  sel("affine_select_equal_offset_fp32_to_bf16_128x64", in_normal("a", DType::kFloat32, {128, 64}), 2, -1, -4, "equal",
      0.5, DType::kBFloat16);
  sel("affine_select_not_equal_fp16_1x512", in_normal("a", DType::kFloat16, {1, 512}), 1, 0, -100, "not_equal", -1e9,
      DType::kFloat16);
}

// -- scans and statistics ---------------------------------------------------------------------------

void add_scan_bn(Table& t) {
  auto scan = [&](const std::string& name, DType d, const Shape& s, const std::string& op0, const std::string& op1,
                  std::string initial, bool rev0, bool rev1, DType out, double lo, double hi) {
    OpCase c = make(name, "nisa.tensor_tensor_scan(op0=" + op0 + ", op1=" + op1 + ")", "tensor_tensor_scan", "scan");
    c.inputs = {in_uniform("a", d, s, lo, hi), in_normal("b", d, s)};
    c.kwargs = {{"op0", py_str(op0)},
                {"op1", py_str(op1)},
                {"out", py_str(dt_name(out))},
                {"reverse0", py_bool(rev0)},
                {"reverse1", py_bool(rev1)}};
    Json j;
    j.s("op0", op0).s("op1", op1).b("reverse0", rev0).b("reverse1", rev1);
    if (initial == "tile") {
      c.kwargs["initial"] = py_str("tile");
      c.inputs.push_back(in_normal("init", DType::kFloat32, {s[0], 1}));
      j.s("initial", "tile");
    } else {
      c.kwargs["initial"] = initial;
      j.raw("initial", initial);
    }
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol_arith(out);
    t.add(c);
  };
  // r[i] = op1(op0(data0[i], r[i-1]), data1[i]): a decayed running sum, cumulative sums, running max.
  scan("tensor_tensor_scan_multiply_add_fp32_128x512", DType::kFloat32, kBig, "multiply", "add", "0.0", false, false,
       DType::kFloat32, 0.5, 1.0);
  scan("tensor_tensor_scan_multiply_add_tile_init_fp32_7x64", DType::kFloat32, {7, 64}, "multiply", "add", "tile",
       false, false, DType::kFloat32, 0.5, 1.0);
  scan("tensor_tensor_scan_add_add_bf16_128x64", DType::kBFloat16, {128, 64}, "add", "add", "1.5", false, false,
       DType::kBFloat16, -1.0, 1.0);
  scan("tensor_tensor_scan_maximum_add_fp32_1x512", DType::kFloat32, {1, 512}, "maximum", "add", "-1e30", false, false,
       DType::kFloat32, -1.0, 1.0);
  scan("tensor_tensor_scan_subtract_reverse_multiply_reverse_fp32_7x3", DType::kFloat32, {7, 3}, "subtract", "multiply",
       "2.0", true, true, DType::kFloat32, -2.0, 2.0);
  scan("tensor_tensor_scan_multiply_add_3d_fp32_128x4x16", DType::kFloat32, {128, 4, 16}, "multiply", "add", "0.0",
       false, false, DType::kFloat32, 0.5, 1.0);

  // reg = op1(src op0 imm0, reg) along each partition, from op1's identity or a [P, 1] tile (load_reduce).
  auto cum = [&](const std::string& name, DType d, const Shape& s, const std::string& op0, const std::string& op1,
                 const std::string& imm0, bool load, DType out, double lo, double hi) {
    OpCase c = make(name, "nisa.tensor_scalar_cumulative(op0=" + op0 + ", op1=" + op1 + ")", "tensor_scalar_cumulative",
                    "cumulative");
    c.inputs = {in_uniform("a", d, s, lo, hi)};
    c.kwargs = {{"op0", py_str(op0)}, {"op1", py_str(op1)}, {"imm0", imm0}, {"out", py_str(dt_name(out))}};
    Json j;
    j.s("op0", op0).s("op1", op1).raw("imm0", imm0).b("load", load);
    if (load) c.inputs.push_back(in_normal("init", DType::kFloat32, {s[0], 1}));
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol_arith(out);
    t.add(c);
  };
  cum("tensor_scalar_cumulative_multiply_add_fp32_128x512", DType::kFloat32, kBig, "multiply", "add", "0.5", false,
      DType::kFloat32, -1.0, 1.0);
  cum("tensor_scalar_cumulative_add_maximum_load_fp32_7x64", DType::kFloat32, {7, 64}, "add", "maximum", "-0.25", true,
      DType::kFloat32, -1.0, 1.0);
  cum("tensor_scalar_cumulative_multiply_multiply_bf16_128x64", DType::kBFloat16, {128, 64}, "multiply", "multiply",
      "1.0", false, DType::kBFloat16, 0.9, 1.1);
  cum("tensor_scalar_cumulative_add_subtract_fp32_1x33", DType::kFloat32, {1, 33}, "add", "subtract", "1.0", false,
      DType::kFloat32, -2.0, 2.0);
  cum("tensor_scalar_cumulative_subtract_minimum_3d_fp32_128x4x16", DType::kFloat32, {128, 4, 16}, "subtract",
      "minimum", "0.125", false, DType::kFloat32, -1.0, 1.0);

  auto bn = [&](const std::string& name, const std::string& entry, InputSpec x) {
    OpCase c = make(name, entry == "bn_stats" ? "nisa.bn_stats" : "nisa.bn_stats + nisa.bn_aggr", entry, entry);
    c.inputs = {std::move(x)};
    c.kwargs = {{"out", py_str("float32")}};
    c.ref_params = "{}";
    c.outs = {DType::kFloat32};
    c.tol = tol_arith(DType::kFloat32);
    t.add(c);
  };
  bn("bn_stats_fp32_128x512", "bn_stats", in_normal("a", DType::kFloat32, kBig, 2.0, 3.0));
  bn("bn_stats_fp32_7x3", "bn_stats", in_normal("a", DType::kFloat32, {7, 3}, 1.0, -1.0));
  bn("bn_stats_bf16_128x64", "bn_stats", in_normal("a", DType::kBFloat16, {128, 64}, 1.0, 10.0));
  bn("bn_stats_fp32_1x2", "bn_stats", in_normal("a", DType::kFloat32, {1, 2}));
  bn("bn_aggr_fp32_128x512", "bn_aggr", in_normal("a", DType::kFloat32, kBig, 2.0, 3.0));
  bn("bn_aggr_fp32_128x1024", "bn_aggr", in_normal("a", DType::kFloat32, {128, 1024}, 0.5, -4.0));
  bn("bn_aggr_fp32_7x700", "bn_aggr", in_normal("a", DType::kFloat32, {7, 700}, 1.0, 100.0));
  bn("bn_aggr_bf16_7x1", "bn_aggr", in_normal("a", DType::kBFloat16, {7, 1}));
}

// -- views, in-place, masks, and NKI operations the front end may lack -----------------------------

void add_more(Table& t) {
  const DType f = DType::kFloat32, bf = DType::kBFloat16;
  const Shape s = {128, 64};
  auto simple = [&](const std::string& name, const std::string& what, const std::string& entry,
                    const std::string& ref_op, std::vector<InputSpec> ins, std::map<std::string, std::string> kwargs,
                    const std::string& params, DType out, Tol tol, bool legacy_too = true, bool current_too = true) {
    OpCase c = make(name, what, entry, ref_op);
    c.inputs = std::move(ins);
    c.kwargs = std::move(kwargs);
    c.ref_params = params;
    c.outs = {out};
    c.tol = tol;
    t.add(c, legacy_too, current_too);
  };
  // abs_max / abs_min: ALU operators of the current API.
  for (const char* op : {"abs_max", "abs_min"})
    simple(std::string("tensor_tensor_") + op + "_fp32_128x64", std::string("nisa.tensor_tensor(op=") + op + ")",
           "tensor_tensor", "binary", {in_normal("a", f, s), in_normal("b", f, s)},
           {{"op", py_str(op)}, {"out", py_str("float32")}}, Json().s("op", op).str(), f, tol_arith(f), false);
  // Operands that are views of one tile.
  simple("tensor_tensor_strided_views_add_fp32_128x512", "nisa.tensor_tensor on x[:, 0::2], x[:, 1::2]",
         "tensor_tensor_view", "binary", {in_normal("a", f, kBig)},
         {{"op", py_str("add")}, {"out", py_str("float32")}, {"view", py_str("strided")}},
         Json().s("op", "add").s("view", "strided").str(), f, tol_arith(f));
  simple("tensor_tensor_ap_halves_multiply_bf16_7x64", "nisa.tensor_tensor on .ap() access patterns",
         "tensor_tensor_view", "binary", {in_normal("a", bf, {7, 64})},
         {{"op", py_str("multiply")}, {"out", py_str("bfloat16")}, {"view", py_str("halves")}},
         Json().s("op", "multiply").s("view", "halves").str(), bf, tol_arith(bf), false);
  simple("tensor_tensor_inplace_subtract_fp32_128x64", "nisa.tensor_tensor(dst=data1)", "tensor_tensor_view", "binary",
         {in_normal("a", f, s), in_normal("b", f, s)},
         {{"op", py_str("subtract")}, {"out", py_str("float32")}, {"view", py_str("inplace")}},
         Json().s("op", "subtract").str(), f, tol_arith(f), false);
  simple("tensor_scalar_inplace_multiply_add_bf16_128x64", "nisa.tensor_scalar(dst=data)", "tensor_scalar",
         "tensor_scalar", {in_normal("a", bf, s)},
         {{"op0", py_str("multiply")},
          {"operand0", "2.0"},
          {"op1", py_str("add")},
          {"operand1", "-1.0"},
          {"out", py_str("bfloat16")},
          {"inplace", "True"}},
         Json()
             .s("op0", "multiply")
             .raw("operand0", "2.0")
             .b("reverse0", false)
             .s("op1", "add")
             .raw("operand1", "-1.0")
             .b("reverse1", false)
             .str(),
         bf, tol_arith(bf), false);
  simple("activation_inplace_exp_fp32_128x64", "nisa.activation(dst=data)", "activation", "activation",
         {in_uniform("a", f, s, -5, 5)}, {{"func", py_str("exp")}, {"out", py_str("float32")}, {"inplace", "True"}},
         Json().s("func", "exp").str(), f, tol_transc(f), false);
  simple(
      "tensor_tensor_scan_inplace_multiply_add_fp32_7x64", "nisa.tensor_tensor_scan(dst=data0)", "tensor_tensor_scan",
      "scan", {in_uniform("a", f, {7, 64}, 0.5, 1.0), in_normal("b", f, {7, 64})},
      {{"op0", py_str("multiply")},
       {"op1", py_str("add")},
       {"initial", "0.0"},
       {"out", py_str("float32")},
       {"inplace", "True"}},
      Json().s("op0", "multiply").s("op1", "add").raw("initial", "0.0").b("reverse0", false).b("reverse1", false).str(),
      f, tol_arith(f), false);
  // Unary operators in tensor_scalar (operand0 = 0): rsqrt on GpSimd, abs.
  for (const char* op : {"rsqrt", "abs"})
    simple(std::string("tensor_scalar_unary_") + op + "_fp32_128x64", std::string("nisa.tensor_scalar(op0=") + op + ")",
           "tensor_scalar", "tensor_scalar",
           {std::string(op) == "rsqrt" ? in_uniform("a", f, s, 1e-3, 1e3) : in_normal("a", f, s)},
           {{"op0", py_str(op)}, {"operand0", "0.0"}, {"out", py_str("float32")}},
           Json().s("op0", op).raw("operand0", "0.0").b("reverse0", false).str(), f, tol_transc(f));
  // nisa.reciprocal on the Vector engine (more precise than the activation).
  simple("reciprocal_fp32_128x512", "nisa.reciprocal", "reciprocal", "activation",
         {with(in_uniform("a", f, kBig, 1e-3, 1e3), {-1.0, -1e-3, 3.0, 1e30})}, {{"out", py_str("float32")}},
         Json().s("func", "reciprocal").str(), f, tol_arith(f));
  simple("reciprocal_bf16_7x64", "nisa.reciprocal", "reciprocal", "activation",
         {in_uniform("a", bf, {7, 64}, 0.01, 100)}, {{"out", py_str("bfloat16")}}, Json().s("func", "reciprocal").str(),
         bf, tol_arith(bf));
  // An activation bias in bfloat16 (any dtype but tfloat32 is allowed).
  {
    OpCase c = make("activation_tanh_bias_bf16_fp32_128x64", "nisa.activation(op=tanh)", "activation", "activation");
    c.inputs = {in_uniform("a", f, s, -3, 3), in_uniform("bias", bf, {128, 1}, -1, 1)};
    c.kwargs = {{"func", py_str("tanh")}, {"out", py_str("float32")}, {"scale", "0.5"}};
    c.ref_params = Json().s("func", "tanh").b("bias", true).n("scale", 0.5).str();
    c.outs = {f};
    c.tol = tol_transc(f);
    t.add(c);
  }
  // Activation functions of the Scalar engine's table that lang.py does not list.
  for (const char* fn : {"mish", "gelu_dx", "silu_dx", "erf_dx", "gelu_apprx_sigmoid"})
    simple(std::string("activation_") + fn + "_fp32_128x64", std::string("nisa.activation(op=") + fn + ")",
           "activation", "activation", {in_uniform("a", f, s, -6, 6)},
           {{"func", py_str(fn)}, {"out", py_str("float32")}}, Json().s("func", fn).str(), f, tol_transc(f));
  // Legacy masks: the ragged last tile of Appendix B.
  simple("nl_exp_masked_ragged_rows_fp32_200x64", "nl.load/nl.exp/nl.store with mask=", "masked_exp_rows", "activation",
         {in_uniform("a", f, {200, 64}, -5, 5)}, {}, Json().s("func", "exp").str(), f, tol_transc(f), true, false);
  // More nl.* operations.
  for (const char* op : {"fmod", "mod"})
    simple(std::string("nl_") + op + "_fp32_128x64", std::string("nl.") + op, "nl_binary", "binary",
           {in_normal("a", f, s, 10.0), with(in_normal("b", f, s, 3.0), {-2.5, 2.5, 1.0})}, {{"op", py_str(op)}},
           Json().s("op", op).str(), f, tol_arith(f));
  simple("nl_invert_i32_128x64", "nl.invert", "nl_unary", "activation",
         {with(in_ints("a", DType::kInt32, s, -2147483648.0, 2147483647.0), edges(DType::kInt32))},
         {{"func", py_str("invert")}, {"out", py_str("int32")}}, Json().s("func", "invert").str(), DType::kInt32,
         tol_exact());
  simple("nl_logical_not_fp32_to_u8_128x64", "nl.logical_not", "nl_unary", "activation",
         {InputSpec{"a", f, s, Dist::kSmallInts, -1, 1, {}}},
         {{"func", py_str("logical_not")}, {"out", py_str("uint8")}}, Json().s("func", "logical_not").str(),
         DType::kUInt8, tol_exact());
  simple("nl_where_fp32_128x64", "nl.where", "nl_where", "where",
         {in_ints("c", DType::kUInt8, s, 0, 1), in_normal("a", f, s), in_normal("b", f, s)}, {}, "{}", f, tol_exact());
  simple("nl_softmax_fp32_128x512", "nl.softmax", "nl_softmax", "softmax", {in_normal("a", f, kBig, 3.0)}, {}, "{}", f,
         tol_transc(f));
  {
    OpCase c = make("nl_var_fp32_128x512", "nl.var", "nl_reduce", "reduce");
    c.inputs = {in_normal("a", f, kBig, 2.0, 5.0)};
    c.kwargs = {{"fn", py_str("var")}, {"axis", "1"}};
    c.ref_params = Json().s("op", "var").ints("axes", {1}).str();
    c.outs = {f};
    c.tol = tol_arith(f);
    t.add(c);
  }
  {
    OpCase c = make("nl_all_fp32_128x8", "nl.all", "nl_reduce", "reduce");
    c.inputs = {InputSpec{"a", f, {128, 8}, Dist::kSmallInts, 0, 6, {}}};
    c.kwargs = {{"fn", py_str("all")}, {"axis", "1"}};
    c.ref_params = Json().s("op", "all").ints("axes", {1}).str();
    c.outs = {DType::kBool};
    c.tol = tol_exact();
    t.add(c);
  }
  // Integer tiles through float32 engines: the values pass through float32 (2^24 + 1 does not).
  {
    OpCase c =
        make("tensor_reduce_maximum_i32_large_128x64", "nisa.tensor_reduce(op=maximum)", "tensor_reduce", "reduce");
    c.inputs = {with(in_ints("a", DType::kInt32, s, -1000, 1000), {16777217, 2147483520, 33554431})};
    c.kwargs = {{"op", py_str("maximum")}, {"out", py_str("int32")}, {"axis", "(1,)"}};
    c.ref_params = Json().s("op", "maximum").ints("axes", {1}).str();
    c.outs = {DType::kInt32};
    c.tol = tol_exact();
    t.add(c);
  }
  simple("activation_copy_i32_large_128x64", "nisa.activation(op=copy)", "activation", "activation",
         {with(in_ints("a", DType::kInt32, s, -100000, 100000), {16777217, -16777219, 2147483647})},
         {{"func", py_str("copy")}, {"out", py_str("int32")}}, Json().s("func", "copy").str(), DType::kInt32,
         tol_exact());
  // float8 tiles as ALU operands (the result overflows to inf, as ml_dtypes and nki.simulate do).
  simple("tensor_tensor_multiply_e4m3_128x64", "nisa.tensor_tensor(op=multiply)", "tensor_tensor", "binary",
         {in_normal("a", DType::kFloat8E4M3, s, 8.0), in_normal("b", DType::kFloat8E4M3, s, 8.0)},
         {{"op", py_str("multiply")}, {"out", py_str("float8_e4m3")}}, Json().s("op", "multiply").str(),
         DType::kFloat8E4M3, tol_arith(DType::kFloat8E4M3));
  simple("tensor_tensor_add_e5m2_to_bf16_128x64", "nisa.tensor_tensor(op=add)", "tensor_tensor", "binary",
         {in_normal("a", DType::kFloat8E5M2, s, 100.0), in_normal("b", DType::kFloat8E5M2, s, 1.0)},
         {{"op", py_str("add")}, {"out", py_str("bfloat16")}}, Json().s("op", "add").str(), bf, tol_arith(bf));
  // The legacy nl.store of a PSUM tile.
  {
    OpCase c = make("nl_store_psum_matmul_fp32_k64_m32_n64", "nl.store(value=<PSUM tile>)", "store_psum", "matmul");
    c.inputs = {in_normal("s0", f, {64, 32}), in_normal("m0", f, {64, 64})};
    c.ref_params = Json().raw("modes", "[\"auto\"]").str();
    c.outs = {f};
    c.tol = tol_arith(f);
    t.add(c, true, false);
  }
  // DMA between HBM tensors and between SBUF tiles (the current API allows both).
  simple("dma_copy_hbm_to_hbm_cast_bf16_128x64", "nisa.dma_copy(HBM -> HBM)", "dma_hbm_to_hbm", "copy",
         {in_normal("a", f, s)}, {{"out", py_str("bfloat16")}}, "{}", bf, tol_exact(), false);
  simple("dma_copy_sbuf_to_sbuf_cast_fp16_7x64", "nisa.dma_copy(SBUF -> SBUF)", "dma_sbuf_to_sbuf", "copy",
         {in_normal("a", f, {7, 64}, 100.0)}, {{"out", py_str("float16")}}, "{}", DType::kFloat16, tol_exact(), false);
}

// -- max8, nc_find_index8, nc_match_replace8 -------------------------------------------------------

// "(start, step)" of the eight columns of the data whose values find_index8 / match_replace8 look
// for (the kernels copy them into the vals tile), as the Python literal and the oracle's JSON.
void set_cols(OpCase& c, Json& j, int64_t start, int64_t step) {
  c.kwargs["cols"] = py_ints({start, step});
  j.ints("cols", {start, step});
}

void add_search(Table& t) {
  const DType f = DType::kFloat32, bf = DType::kBFloat16, h = DType::kFloat16;
  const double inf = std::numeric_limits<double>::infinity();
  // max8: the 8 largest values of each partition, descending; values that repeat are repeated
  // (Appendix A: sort(x[p].ravel())[::-1][:8]). No NaN, and no zeros of both signs.
  auto m8 = [&](const std::string& name, InputSpec x, DType out) {
    OpCase c = make(name, "nisa.max8", "max8", "max8");
    c.inputs = {std::move(x)};
    c.kwargs = {{"out", py_str(dt_name(out))}};
    c.ref_params = "{}";
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c);
  };
  m8("max8_fp32_128x512", in_normal("a", f, kBig), f);
  m8("max8_bf16_7x64", in_normal("a", bf, {7, 64}), bf);
  m8("max8_ties_fp32_128x64", InputSpec{"a", f, {128, 64}, Dist::kSmallInts, -3, 3, {}}, f);
  m8("max8_3d_fp32_128x4x16", in_normal("a", f, {128, 4, 16}, 10.0), f);
  m8("max8_fp16_to_fp32_1x8", in_normal("a", h, {1, 8}, 100.0), f);
  m8("max8_fp32_to_bf16_16x100", in_normal("a", f, {16, 100}), bf);
  m8("max8_fp32_specials_7x64", with(in_normal("a", f, {7, 64}), {inf, -inf, 3e38, -3e38, 1e30, inf}), f);

  // nc_find_index8: the index of the first occurrence of each value. The values are eight of the
  // data's own columns, distinct in each partition (the oracle checks), so that every one is
  // present and no two ask for the same value (but in the "repeated_vals" case); the data may repeat
  // them earlier (bfloat16). With
  // `absent`, the last value is one the data does not hold: its index is the all-ones sentinel
  // (0xFFFFFFFF, 0xFFFF for uint16), as the docs say.
  auto fi8 = [&](const std::string& name, InputSpec x, int64_t start, int64_t step, DType out,
                 std::optional<double> absent = std::nullopt, bool dup = false) {
    OpCase c = make(name, "nisa.nc_find_index8", "find_index8", "find_index8");
    Json j;
    set_cols(c, j, start, step);
    if (dup) j.b("dup", true);
    if (absent) {
      c.kwargs["absent"] = py_num(*absent);
      j.n("absent", *absent);
    }
    c.inputs = {std::move(x)};
    c.kwargs["out"] = py_str(dt_name(out));
    c.ref_params = j.str();
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c);
  };
  fi8("nc_find_index8_fp32_128x512", in_normal("a", f, kBig), 3, 61, DType::kUInt32);
  fi8("nc_find_index8_repeats_bf16_4x64", InputSpec{"a", bf, {4, 64}, Dist::kSmallInts, -100, 100, {}}, 3, 7,
      DType::kUInt32);
  fi8("nc_find_index8_fp16_32x40", in_uniform("a", h, {32, 40}, -1000, 1000), 1, 4, DType::kUInt32);
  fi8("nc_find_index8_fp32_to_u16_16x8", in_normal("a", f, {16, 8}), 0, 1, DType::kUInt16);
  fi8("nc_find_index8_absent_fp32_7x64", in_normal("a", f, {7, 64}), 0, 8, DType::kUInt32, 1000.0);
  fi8("nc_find_index8_absent_fp32_to_u16_16x8", in_normal("a", f, {16, 8}), 0, 1, DType::kUInt16, 1000.0);
  // Repeated vals (max8's ties): successive occurrences, ascending across the columns.
  fi8("nc_find_index8_repeated_vals_fp32_32x64", InputSpec{"a", f, {32, 64}, Dist::kSmallInts, 0, 4, {}}, 0, 8,
      DType::kUInt32, std::nullopt, true);

  // nc_match_replace8: the first occurrence of each value replaced by imm, its index to dst_idx.
  // With vals that repeat ("dup"), each occurrence pairs with its own dst_idx column, in the order
  // the docs give: vals are taken from the last to the first, so the earliest match goes to the
  // highest column among the repeats.
  auto mr8 = [&](const std::string& name, InputSpec x, int64_t start, int64_t step, double imm,
                 std::optional<DType> idx_out, bool dup = false) {
    OpCase c = make(name, "nisa.nc_match_replace8", "match_replace8", "match_replace8");
    Json j;
    set_cols(c, j, start, step);
    j.n("imm", imm).b("dup", dup);
    c.outs = {x.dtype};
    c.inputs = {std::move(x)};
    c.kwargs["imm"] = py_num(imm);
    if (idx_out) {
      c.kwargs["idx_out"] = py_str(dt_name(*idx_out));
      c.outs.push_back(*idx_out);
    }
    c.ref_params = j.str();
    c.tol = tol_exact();
    t.add(c);
  };
  mr8("nc_match_replace8_fp32_128x512", in_normal("a", f, kBig), 7, 63, -inf, DType::kUInt32);
  mr8("nc_match_replace8_bf16_7x64", in_normal("a", bf, {7, 64}, 0.5), 2, 7, -1000.0, DType::kInt32);
  mr8("nc_match_replace8_all_fp32_16x8", in_normal("a", f, {16, 8}), 0, 1, 0.5, DType::kUInt32);
  mr8("nc_match_replace8_no_idx_fp16_64x64", in_uniform("a", h, {64, 64}, -1000, 1000), 1, 7, 0.0, std::nullopt);
  mr8("nc_match_replace8_repeats_bf16_4x64", InputSpec{"a", bf, {4, 64}, Dist::kSmallInts, -100, 100, {}}, 1, 7,
      -1000.0, DType::kInt32);
  mr8("nc_match_replace8_repeated_vals_fp32_32x64", InputSpec{"a", f, {32, 64}, Dist::kSmallInts, 0, 4, {}}, 0, 8, -1.0,
      DType::kUInt32, true);
}

// -- nc_stream_shuffle, range_select, select_reduce, tensor_copy_predicated -----------------------

std::string py_list(const std::vector<int64_t>& v) {
  return py_ints(v, false);
}

void add_select(Table& t) {
  const DType f = DType::kFloat32, bf = DType::kBFloat16, h = DType::kFloat16;
  // nc_stream_shuffle: in each 32-partition quadrant, dst[i] = src[mask[i]]; 255 keeps dst[i].
  auto sh = [&](const std::string& name, DType d, const Shape& s, std::vector<int64_t> mask, bool inplace,
                std::optional<int64_t> src_rows = std::nullopt) {
    OpCase c = make(name, "nisa.nc_stream_shuffle", "stream_shuffle", "stream_shuffle");
    auto draw = [&](const std::string& n) {
      return d == DType::kInt32 ? in_ints(n, d, s, -2147483648.0, 2147483647.0) : in_normal(n, d, s, 10.0);
    };
    c.inputs = {draw("a")};
    if (!inplace) c.inputs.push_back(draw("b"));
    c.kwargs = {{"shuffle_mask", py_list(mask)}};
    Json j;
    j.ints("mask", mask).b("inplace", inplace);
    if (src_rows) {
      c.kwargs["src_rows"] = std::to_string(*src_rows);
      j.n("src_rows", static_cast<double>(*src_rows));
    }
    c.ref_params = j.str();
    c.outs = {d};
    c.tol = tol_exact();
    t.add(c);
  };
  std::vector<int64_t> flip, rotate, scatter;
  for (int64_t i = 0; i < 32; ++i) {
    flip.push_back(i % 5 == 2 ? 255 : 31 - i);
    rotate.push_back((i + 31) % 32);
    scatter.push_back(i % 7 == 0 ? 255 : (i * 11 + 3) % 32);
  }
  sh("nc_stream_shuffle_reverse_keep_fp32_128x64", f, {128, 64}, flip, false);
  sh("nc_stream_shuffle_rotate_inplace_bf16_32x128", bf, {32, 128}, rotate, true);
  sh("nc_stream_shuffle_broadcast_i32_64x16", DType::kInt32, {64, 16}, std::vector<int64_t>(32, 3), false);
  sh("nc_stream_shuffle_scatter_fp16_32x1", h, {32, 1}, scatter, false);
  sh("nc_stream_shuffle_3d_inplace_fp32_96x4x8", f, {96, 4, 8}, flip, true);
  // One source partition broadcast to a quadrant (the docs' second example).
  sh("nc_stream_shuffle_one_partition_to_32_fp32_32x64", f, {32, 64}, std::vector<int64_t>(32, 0), false, 1);

  // range_select (NeuronCore-v3+): idx = range_start + free index, kept where comp_op0(idx, bound0)
  // and comp_op1(idx, bound1), else float32 min; reduce_res = the row maximum of the float32
  // selection (before the write into dst: the docs' note has an all-filled bfloat16 row's dst at
  // -inf and its float32 reduce_res at float32 min).
  auto rs = [&](const std::string& name, InputSpec x, const std::string& op0, const std::string& op1, InputSpec b0,
                InputSpec b1, int64_t start, DType out, std::optional<DType> red) {
    OpCase c = make(name, "nisa.range_select(" + op0 + ", " + op1 + ")", "range_select", "range_select");
    c.inputs = {std::move(x), std::move(b0), std::move(b1)};
    c.kwargs = {{"comp_op0", py_str(op0)},
                {"comp_op1", py_str(op1)},
                {"range_start", std::to_string(start)},
                {"out", py_str(dt_name(out))}};
    Json j;
    j.s("op0", op0).s("op1", op1).n("range_start", static_cast<double>(start));
    c.outs = {out};
    if (red) {
      c.kwargs["red"] = py_str(dt_name(*red));
      c.outs.push_back(*red);
      j.b("reduce", true);
    }
    c.ref_params = j.str();
    c.tol = tol_exact();
    c.target = "trn2";
    t.add(c);
  };
  auto bound = [&](const std::string& n, int64_t p, double lo, double hi) {
    return InputSpec{n, f, {p, 1}, Dist::kSmallInts, lo, hi, {}};
  };
  rs("range_select_ge_lt_fp32_128x64", in_normal("a", f, {128, 64}), "greater_equal", "less", bound("b0", 128, -4, 40),
     bound("b1", 128, 0, 70), 0, f, f);
  rs("range_select_gt_le_start_bf16_7x512", in_normal("a", bf, {7, 512}), "greater", "less_equal",
     bound("b0", 7, 90, 400), bound("b1", 7, 200, 700), 100, bf, f);
  rs("range_select_equal_ge_fp32_to_bf16_128x3", in_normal("a", f, {128, 3}), "equal", "greater_equal",
     bound("b0", 128, 0, 3), bound("b1", 128, -1, 2), 0, bf, std::nullopt);
  rs("range_select_fractional_bounds_fp32_16x64", in_normal("a", f, {16, 64}), "greater", "less",
     in_uniform("b0", f, {16, 1}, -2, 40), in_uniform("b1", f, {16, 1}, 10, 70), 0, f, f);
  rs("range_select_le_ge_3d_fp32_128x4x16", in_normal("a", f, {128, 4, 16}), "less_equal", "greater_equal",
     bound("b0", 128, 10, 70), bound("b1", 128, -5, 30), 0, f, f);

  // select_reduce: dst = on_true where the predicate is non-zero (zero under reverse_pred), else
  // on_false (a number or a [P, 1] tile); reduce_res = the row maximum. The predicates are 0 / 1
  // and on_false is exact in the destination type, so the reduction sees dst's own values.
  auto sr = [&](const std::string& name, InputSpec pred, InputSpec x, std::optional<double> on_false,
                std::optional<InputSpec> f_tile, bool reverse, DType out, std::optional<DType> red) {
    OpCase c = make(name, "nisa.select_reduce", "select_reduce", "select_reduce");
    c.inputs = {std::move(pred), std::move(x)};
    c.kwargs = {{"out", py_str(dt_name(out))}, {"reverse_pred", py_bool(reverse)}};
    Json j;
    j.b("reverse", reverse);
    if (on_false) {
      c.kwargs["on_false"] = py_num(*on_false);
      j.n("on_false", *on_false);
    } else {
      c.inputs.push_back(*f_tile);
    }
    c.outs = {out};
    if (red) {
      c.kwargs["red"] = py_str(dt_name(*red));
      c.outs.push_back(*red);
      j.b("reduce", true);
    }
    c.ref_params = j.str();
    c.tol = tol_exact();
    t.add(c);
  };
  auto pred = [&](DType d, const Shape& s) { return in_ints("pred", d, s, 0, 1); };
  // Any non-zero predicate selects on_true (the docs' NumPy: np.where(predicate, on_true, on_false)).
  sr("select_reduce_scalar_fp32_128x512", in_ints("pred", DType::kUInt8, kBig, 0, 3), in_normal("a", f, kBig), -5.0,
     std::nullopt, false, f, f);
  sr("select_reduce_tile_reverse_bf16_7x64", pred(DType::kInt8, {7, 64}), in_normal("a", bf, {7, 64}), std::nullopt,
     in_normal("f", bf, {7, 1}, 2.0), true, bf, f);
  sr("select_reduce_no_reduce_fp16_i16_128x64", pred(DType::kInt16, {128, 64}), in_normal("a", h, {128, 64}, 100.0),
     0.25, std::nullopt, false, h, std::nullopt);
  sr("select_reduce_fp32min_u16_fp32_32x16", pred(DType::kUInt16, {32, 16}), in_normal("a", f, {32, 16}), -kF32Max,
     std::nullopt, false, f, f);
  sr("select_reduce_tile_fp32_u8_1x3", pred(DType::kUInt8, {1, 3}), in_normal("a", f, {1, 3}), std::nullopt,
     in_normal("f", f, {1, 1}), false, f, f);

  // tensor_copy_predicated: dst = src (a tile or a number) where the predicate holds (reverse_pred:
  // where it does not); elsewhere dst keeps its values. src and dst share their type: bit-exact.
  auto cp = [&](const std::string& name, InputSpec pr, DType d, const Shape& s, std::optional<double> value,
                bool reverse) {
    OpCase c = make(name, "nisa.tensor_copy_predicated", "copy_predicated", "copy_predicated");
    auto draw = [&](const std::string& n) {
      return d == DType::kInt32 ? with(in_ints(n, d, s, -2147483648.0, 2147483647.0), edges(d))
                                : in_normal(n, d, s, 10.0);
    };
    c.inputs = {std::move(pr), draw("b")};
    c.kwargs = {{"reverse_pred", py_bool(reverse)}};
    Json j;
    j.b("reverse", reverse);
    if (value) {
      c.kwargs["value"] = py_num(*value);
      j.n("value", *value);
    } else {
      c.inputs.push_back(draw("a"));
    }
    c.ref_params = j.str();
    c.outs = {d};
    c.tol = tol_exact();
    t.add(c);
  };
  cp("tensor_copy_predicated_fp32_128x512", pred(DType::kUInt8, kBig), f, kBig, std::nullopt, false);
  cp("tensor_copy_predicated_reverse_bf16_u16_7x64", pred(DType::kUInt16, {7, 64}), bf, {7, 64}, std::nullopt, true);
  cp("tensor_copy_predicated_scalar_fp32_u32_128x64", pred(DType::kUInt32, {128, 64}), f, {128, 64}, 2.5, false);
  cp("tensor_copy_predicated_i32_128x3", pred(DType::kUInt8, {128, 3}), DType::kInt32, {128, 3}, std::nullopt, false);
  cp("tensor_copy_predicated_3d_reverse_fp16_128x4x16", pred(DType::kUInt8, {128, 4, 16}), h, {128, 4, 16},
     std::nullopt, true);
}

// -- tensor_partition_reduce, gathers, dma_transpose, sequence_bounds -----------------------------

void add_gather(Table& t) {
  const DType f = DType::kFloat32, bf = DType::kBFloat16, h = DType::kFloat16, i32 = DType::kInt32;
  // tensor_partition_reduce: dst[1, ...] = data reduced over its partitions.
  auto pr = [&](const std::string& name, const std::string& op, InputSpec x, DType out) {
    OpCase c = make(name, "nisa.tensor_partition_reduce(op=" + op + ")", "partition_reduce", "partition_reduce");
    c.inputs = {std::move(x)};
    c.kwargs = {{"op", py_str(op)}, {"out", py_str(dt_name(out))}};
    c.ref_params = Json().s("op", op).str();
    c.outs = {out};
    c.tol = op == "add" ? tol_arith(out) : tol_exact();
    t.add(c);
  };
  pr("tensor_partition_reduce_add_fp32_128x64", "add", in_normal("a", f, {128, 64}, 1.0, 0.5), f);
  pr("tensor_partition_reduce_add_bf16_16x64", "add", in_normal("a", bf, {16, 64}), bf);
  pr("tensor_partition_reduce_add_3d_fp32_128x4x16", "add", in_normal("a", f, {128, 4, 16}), f);
  pr("tensor_partition_reduce_maximum_fp32_7x512", "maximum", with(in_normal("a", f, {7, 512}), {1e30, -1e30}), f);
  pr("tensor_partition_reduce_maximum_bf16_128x64", "maximum", in_normal("a", bf, {128, 64}), bf);
  pr("tensor_partition_reduce_bitwise_or_i32_3x64", "bitwise_or",
     with(in_ints("a", i32, {3, 64}, 0, 1048575), {-2147483648.0, 1 << 24}), i32);
  pr("tensor_partition_reduce_bitwise_and_i32_5x8", "bitwise_and",
     with(in_ints("a", i32, {5, 8}, -2147483648.0, 2147483647.0), {-1, -1, -1}), i32);

  // nl.gather_flattened: out[p, ...] = data[p].flatten()[indices[p].flatten()], in the indices' shape.
  auto gf = [&](const std::string& name, InputSpec x, const Shape& idx, std::optional<DType> dtype_arg) {
    OpCase c = make(name, "nl.gather_flattened", "gather_flattened", "gather_flattened");
    const int64_t per = shape_numel(x.shape) / x.shape[0];
    const DType out = dtype_arg.value_or(x.dtype);
    c.inputs = {std::move(x), in_ints("idx", DType::kUInt32, idx, 0, static_cast<double>(per - 1))};
    if (dtype_arg) c.kwargs["out"] = py_str(dt_name(*dtype_arg));
    c.ref_params = "{}";
    c.outs = {out};
    c.tol = tol_exact();
    t.add(c);
  };
  gf("nl_gather_flattened_fp32_128x512_to_128x64", in_normal("a", f, kBig), {128, 64}, std::nullopt);
  gf("nl_gather_flattened_bf16_7x64_to_7x100", in_normal("a", bf, {7, 64}), {7, 100}, std::nullopt);
  gf("nl_gather_flattened_i32_32x16", in_ints("a", i32, {32, 16}, -2147483648.0, 2147483647.0), {32, 16}, std::nullopt);
  gf("nl_gather_flattened_3d_fp32_128x4x16_to_128x8", in_normal("a", f, {128, 4, 16}), {128, 8}, std::nullopt);
  gf("nl_gather_flattened_dtype_fp32_to_bf16_16x64", in_normal("a", f, {16, 64}), {16, 32}, bf);
  gf("nl_gather_flattened_to_3d_fp16_16x40_to_16x2x8", in_normal("a", h, {16, 40}, 100.0), {16, 2, 8}, std::nullopt);

  // local_gather: per 16-partition group, the group's indices read partition first (column by
  // column) and cut to num_valid_indices; each names k = num_elem_per_idx contiguous elements
  // (the instruction takes element offsets, index * k; the kernels shift the logical indices).
  auto lg = [&](const std::string& name, InputSpec x, int64_t cols, int64_t k, std::optional<int64_t> n) {
    OpCase c =
        make(name, "nisa.local_gather(num_elem_per_idx=" + std::to_string(k) + ")", "local_gather", "local_gather");
    const int64_t entries = shape_numel(x.shape) / x.shape[0] / k;
    const int64_t p = x.shape[0];
    c.inputs = {std::move(x), in_ints("idx", DType::kUInt16, {p, cols}, 0, static_cast<double>(entries - 1))};
    c.kwargs = {{"k", std::to_string(k)}};
    Json j;
    j.n("k", static_cast<double>(k));
    if (n) {
      c.kwargs["n"] = std::to_string(*n);
      j.n("n", static_cast<double>(*n));
    }
    c.ref_params = j.str();
    c.outs = {c.inputs[0].dtype};
    c.tol = tol_exact();
    t.add(c);
  };
  lg("local_gather_k1_fp32_128x64_idx128x4", in_normal("a", f, {128, 64}), 4, 1, std::nullopt);
  lg("local_gather_k4_n20_bf16_32x9x4_idx32x2", in_normal("a", bf, {32, 9, 4}), 2, 4, 20);
  lg("local_gather_k2_i32_16x32x2_idx16x3", in_ints("a", i32, {16, 32, 2}, -2147483648.0, 2147483647.0), 3, 2,
     std::nullopt);
  lg("local_gather_k32_n10_fp16_64x4x32_idx64x1", in_normal("a", h, {64, 4, 32}, 100.0), 1, 32, 10);

  // dma_transpose: the axes permuted, (1, 0) / (2, 1, 0) / (3, 1, 2, 0) by rank; from HBM or SBUF.
  auto dt = [&](const std::string& name, InputSpec x, bool sbuf_src, bool explicit_axes) {
    OpCase c = make(name, "nisa.dma_transpose", "dma_transpose", "dma_transpose");
    const size_t rank = x.shape.size();
    c.inputs = {std::move(x)};
    if (sbuf_src) c.kwargs["sbuf_src"] = "True";
    if (explicit_axes) {
      const std::vector<int64_t> axes = rank == 2   ? std::vector<int64_t>{1, 0}
                                        : rank == 3 ? std::vector<int64_t>{2, 1, 0}
                                                    : std::vector<int64_t>{3, 1, 2, 0};
      c.kwargs["axes"] = py_ints(axes);
    }
    c.ref_params = "{}";
    c.outs = {c.inputs[0].dtype};
    c.tol = tol_exact();
    t.add(c);
  };
  dt("dma_transpose_hbm_fp32_64x128", in_normal("a", f, {64, 128}), false, false);
  dt("dma_transpose_sbuf_bf16_16x128", in_normal("a", bf, {16, 128}), true, false);
  dt("dma_transpose_hbm_axes_fp16_7x3", in_normal("a", h, {7, 3}, 100.0), false, true);
  dt("dma_transpose_sbuf_i32_128x100", in_ints("a", i32, {128, 100}, -2147483648.0, 2147483647.0), true, false);
  dt("dma_transpose_3d_fp32_4x8x16", in_normal("a", f, {4, 8, 16}), false, false);
  dt("dma_transpose_3d_sbuf_fp16_16x4x32", in_normal("a", h, {16, 4, 32}, 100.0), true, false);
  dt("dma_transpose_4d_bf16_2x3x4x32", in_normal("a", bf, {2, 3, 4, 32}), false, true);

  // sequence_bounds: per element, where its run of equal ids starts and one past where it ends;
  // id 0 is padding (start F, end -1).
  auto sb = [&](const std::string& name, InputSpec ids) {
    OpCase c = make(name, "nisa.sequence_bounds", "sequence_bounds", "sequence_bounds");
    c.outs = {ids.dtype};
    c.inputs = {std::move(ids)};
    c.ref_params = "{}";
    c.tol = tol_exact();
    t.add(c);
  };
  sb("sequence_bounds_fp32_1x512", InputSpec{"ids", f, {1, 512}, Dist::kSmallInts, 0, 3, {}});
  sb("sequence_bounds_i32_1x64", in_ints("ids", i32, {1, 64}, 0, 1));
  sb("sequence_bounds_fp32_1x1", InputSpec{"ids", f, {1, 1}, Dist::kSmallInts, 0, 2, {}});
  sb("sequence_bounds_i32_1x300", in_ints("ids", i32, {1, 300}, 0, 6));
}

// -- known failures --------------------------------------------------------------------------------

struct KnownFailure {
  const char* pattern;  // a regular expression over the test name
  const char* reason;
};

// In order of importance (wrong numbers first, then missing operations).
const std::vector<KnownFailure> kKnownFailures = {
    {"^tensor_tensor_(add_i8|subtract_u8)_overflow_",
     "int8 / uint8 arithmetic wraps (int64 math, two's complement); NKI computes non-int32 integer tiles in "
     "float32 and converts into dst, which by docs/dtypes.md's float-to-int rule saturates (127, 0). The "
     "hardware's conversion is undocumented: confirm before changing"},
};

std::vector<OpCase> build_cases() {
  Table t;
  add_tensor_tensor(t);
  add_tensor_scalar(t);
  add_scalar_tensor_tensor(t);
  add_activation(t);
  add_activation_reduce(t);
  add_nl_unary(t);
  add_nl_binary(t);
  add_reduce(t);
  add_matmul(t);
  add_transpose(t);
  add_copies(t);
  add_dma(t);
  add_memset_iota_select(t);
  add_scan_bn(t);
  add_more(t);
  add_search(t);
  add_select(t);
  add_gather(t);
  std::vector<std::regex> patterns;
  for (const KnownFailure& k : kKnownFailures) patterns.emplace_back(k.pattern);
  for (OpCase& c : t.cases)
    for (size_t k = 0; k < patterns.size(); ++k)
      if (std::regex_search(c.name, patterns[k])) {
        c.known_failure = kKnownFailures[k].reason;
        break;
      }
  return t.cases;
}

const std::vector<OpCase>& all_cases() {
  static const std::vector<OpCase> cases = build_cases();
  return cases;
}

// ---- inputs ---------------------------------------------------------------------------------------

// The seed of an input: the same for the two dialects of a case (they share the reference key).
Tensor make_input(const OpCase& c, const InputSpec& in) {
  Rng rng(fnv1a(c.key), Rng::stream_id(in.name));
  const int64_t n = shape_numel(in.shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    switch (in.dist) {
      case Dist::kNormal: x = in.p0 + in.p1 * rng.normal(); break;
      case Dist::kUniform: x = in.p0 + (in.p1 - in.p0) * rng.uniform(); break;
      case Dist::kIntegers:
      case Dist::kSmallInts:
        x = static_cast<double>(rng.integers(static_cast<int64_t>(in.p0), static_cast<int64_t>(in.p1) + 1));
        break;
    }
  }
  // Specials at spread positions: the k-th at (k * 7919 + 13) mod n; different inputs of a case
  // differ in phase, so specials meet both ordinary values and each other.
  const size_t phase = fnv1a(in.name) % 5;
  for (size_t k = 0; k < in.specials.size() && k < v.size(); ++k)
    v[(k * 7919 + 13 + phase * 3) % v.size()] = in.specials[k];
  if (is_float(in.dtype)) {
    std::vector<float> f(v.size());
    for (size_t i = 0; i < v.size(); ++i) f[i] = f32_from_f64(v[i]);
    return Tensor::from_f32(in.shape, f, in.dtype);
  }
  std::vector<int64_t> iv(v.size());
  const IntRangeD r = int_range(in.dtype);
  for (size_t i = 0; i < v.size(); ++i) iv[i] = static_cast<int64_t>(std::clamp(v[i], r.lo, r.hi));
  return Tensor::from_i64(in.shape, iv, in.dtype);
}

std::vector<Tensor> make_inputs(const OpCase& c) {
  std::vector<Tensor> out;
  for (const auto& in : c.inputs) out.push_back(make_input(c, in));
  return out;
}

// ---- the oracle and its cache ---------------------------------------------------------------------

struct RefOutput {
  std::vector<double> values, bounds;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The folder holding this build's references: next to the binary, named by a stamp of the binary
// (size and time) and of the oracle script.
fs::path compute_cache_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::string stamp = read_file(testing::oracle_script("ops_reference.py"));
  fs::path root;
  if (!ec) {
    const auto size = fs::file_size(exe, ec);
    const auto time = fs::last_write_time(exe, ec).time_since_epoch().count();
    stamp += std::to_string(size) + ":" + std::to_string(time);
    root = exe.parent_path() / "ops_reference_cache";
  } else {
    root = fs::temp_directory_path() / "nkia_ops_reference_cache";
  }
  return root / hex(fnv1a(stamp));
}

const fs::path& cache_dir() {
  static const fs::path dir = compute_cache_dir();
  return dir;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o + "\"";
}

// Makes sure every case's reference is in the cache: computes the missing ones in one oracle run.
std::string ensure_references() {
  const fs::path& dir = cache_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create " + dir.string() + ": " + ec.message();
  std::map<std::string, const OpCase*> missing;
  for (const OpCase& c : all_cases())
    if (!missing.count(c.key) && !fs::exists(dir / (c.key + ".bin")) && !fs::exists(dir / (c.key + ".err")))
      missing[c.key] = &c;
  if (missing.empty()) return "";
  // Older stamps are stale builds' caches.
  for (const auto& e : fs::directory_iterator(dir.parent_path(), ec))
    if (e.path() != dir) fs::remove_all(e.path(), ec);

  testing::ScratchDir scratch;
  if (scratch.path().empty()) return "cannot create a scratch folder";
  const fs::path work = dir / ("tmp-" + std::to_string(getpid()));
  fs::create_directories(work, ec);
  std::ofstream manifest(scratch.file("manifest.jsonl"));
  for (const auto& [key, c] : missing) {
    std::vector<Tensor> inputs = make_inputs(*c);
    std::string ins = "[", dts = "[", outs = "[";
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string path = scratch.file(key + "_" + c->inputs[i].name + ".npy");
      auto saved = npy_save(path, inputs[i], NpyOptions{NarrowAs::kFloat32});
      if (!saved) return saved.error().format();
      ins += (i ? "," : "") + json_string(path);
      dts += (i ? "," : "") + json_string(dt_name(c->inputs[i].dtype));
    }
    for (size_t o = 0; o < c->outs.size(); ++o) outs += (o ? "," : "") + json_string(dt_name(c->outs[o]));
    manifest << "{\"key\": " << json_string(key) << ", \"op\": " << json_string(c->ref_op)
             << ", \"p\": " << c->ref_params << ", \"in\": " << ins << "], \"in_dtypes\": " << dts
             << "], \"outs\": " << outs << "]}\n";
  }
  manifest.close();
  auto run =
      testing::run_python(testing::oracle_script("ops_reference.py"), {scratch.file("manifest.jsonl"), work.string()});
  if (run.exit_code != 0) {
    fs::remove_all(work, ec);
    return "the oracle failed:\n" + run.output;
  }
  for (const auto& e : fs::directory_iterator(work, ec)) fs::rename(e.path(), dir / e.path().filename(), ec);
  fs::remove_all(work, ec);
  return "";
}

// The reference of one case: its outputs, or the oracle's error.
std::variant<std::vector<RefOutput>, std::string> load_reference(const OpCase& c) {
  const fs::path& dir = cache_dir();
  if (fs::exists(dir / (c.key + ".err"))) return "the reference raised:\n" + read_file(dir / (c.key + ".err"));
  std::ifstream in(dir / (c.key + ".bin"), std::ios::binary);
  if (!in) return std::string("no reference in ") + (dir / (c.key + ".bin")).string();
  std::vector<RefOutput> outs;
  for (size_t o = 0; o < c.outs.size(); ++o) {
    int64_t head[2] = {0, 0};  // element count, flags (1: float64 values, 2: bounds follow)
    in.read(reinterpret_cast<char*>(head), sizeof head);
    const int64_t n = head[0];
    if (!in || n < 0 || n > (int64_t{1} << 28)) return "a truncated reference file";
    RefOutput r;
    r.values.resize(static_cast<size_t>(n));
    r.bounds.assign(static_cast<size_t>(n), 0.0);
    if (head[1] & 1) {
      in.read(reinterpret_cast<char*>(r.values.data()), n * 8);
    } else {
      std::vector<float> f(static_cast<size_t>(n));
      in.read(reinterpret_cast<char*>(f.data()), n * 4);
      std::copy(f.begin(), f.end(), r.values.begin());
    }
    if (head[1] & 2) in.read(reinterpret_cast<char*>(r.bounds.data()), n * 8);
    if (!in) return "a truncated reference file";
    outs.push_back(std::move(r));
  }
  return outs;
}

// ---- comparison -----------------------------------------------------------------------------------

// One unit in the last place of `dtype` at the value w (the spacing of its binade; subnormal
// spacing below the smallest normal); 0 for integer types.
double ulp_of(double w, DType t) {
  int mbits, emin;
  switch (t) {
    case DType::kFloat32: mbits = 23, emin = -126; break;
    case DType::kBFloat16: mbits = 7, emin = -126; break;
    case DType::kFloat16: mbits = 10, emin = -14; break;
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3FN: mbits = 3, emin = -6; break;
    case DType::kFloat8E5M2: mbits = 2, emin = -14; break;
    case DType::kTFloat32: mbits = 10, emin = -126; break;
    default: return 0;
  }
  int e = 0;
  if (w != 0 && std::isfinite(w)) {
    std::frexp(w, &e);
    e -= 1;
  }
  return std::ldexp(1.0, std::max(e, emin) - mbits);
}

std::string index_string(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  if (is_float(t.dtype())) {
    for (float x : t.to_f32_vector()) v.push_back(x);
  } else {
    for (int64_t x : t.to_i64_vector()) v.push_back(static_cast<double>(x));
  }
  return v;
}

std::string fmt_value(double v) {
  char buf[48];
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e16)
    std::snprintf(buf, sizeof buf, "%.0f", v);  // integers in full (int32 values, small floats)
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Empty when every output matches; otherwise what differs, for the failure message.
std::string compare_outputs(const OpCase& c, const std::vector<Tensor>& inputs, const KernelOutcome& r,
                            const std::vector<RefOutput>& refs) {
  std::ostringstream msg;
  if (r.outputs.size() != c.outs.size()) {
    msg << c.what << ": the kernel returned " << r.outputs.size() << " outputs, expected " << c.outs.size();
    return msg.str();
  }
  for (size_t o = 0; o < c.outs.size(); ++o) {
    const Tensor& got_t = r.outputs[o];
    const std::string where =
        c.what + " output " + std::to_string(o) + " (" + dt_name(got_t.dtype()) + shape_string(got_t.shape()) + ")";
    if (got_t.dtype() != c.outs[o]) {
      msg << where << ": dtype " << dt_name(got_t.dtype()) << ", expected " << dt_name(c.outs[o]) << "\n";
      continue;
    }
    const RefOutput& ref = refs[o];
    if (static_cast<size_t>(got_t.numel()) != ref.values.size()) {
      msg << where << ": " << got_t.numel() << " elements, the reference has " << ref.values.size() << "\n";
      continue;
    }
    const std::vector<double> got = values_of(got_t);
    const Tol& tol = c.tol;
    int64_t bad = 0, first = -1;
    double max_abs = 0, max_rel = 0, max_ulps = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double g = got[i], w = ref.values[i];
      bool ok;
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else if (std::isinf(w) || std::isinf(g)) {
        ok = g == w;
      } else {
        const double err = std::fabs(g - w);
        max_abs = std::max(max_abs, err);
        if (w != 0) max_rel = std::max(max_rel, err / std::fabs(w));
        if (is_float(got_t.dtype())) max_ulps = std::max(max_ulps, err / ulp_of(w, got_t.dtype()));
        ok = err <= tol.ulps * ulp_of(w, got_t.dtype()) + tol.rtol * std::fabs(w) + tol.atol + ref.bounds[i];
      }
      if (!ok) {
        if (first < 0) first = static_cast<int64_t>(i);
        ++bad;
      }
    }
    if (std::getenv("NKIA_OPS_VERBOSE"))  // for calibrating tolerances: the errors of passing cases too
      std::printf("[ errors   ] %s %s: max abs %.3g, max rel %.3g, max %.3g ulp\n", c.name.c_str(), where.c_str(),
                  max_abs, max_rel, max_ulps);
    if (bad == 0) continue;
    const size_t i = static_cast<size_t>(first);
    msg << where << ": " << bad << " of " << got.size() << " elements differ (tolerance " << tol.ulps << " ulp + rtol "
        << tol.rtol << " + atol " << tol.atol << "); max abs error " << fmt_value(max_abs) << ", max rel error "
        << fmt_value(max_rel) << "; first at " << index_string(first, got_t.shape()) << ": got " << fmt_value(got[i])
        << ", want " << fmt_value(ref.values[i]);
    if (ref.bounds[i] != 0) msg << " (bound " << fmt_value(ref.bounds[i]) << ")";
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k].numel() == got_t.numel())
        msg << "; " << c.inputs[k].name << "=" << fmt_value(values_of(inputs[k])[i]);
    msg << "\n";
  }
  return msg.str();
}

// ---- the test -------------------------------------------------------------------------------------

class OpsRef : public ::testing::TestWithParam<OpCase> {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
    oracle_error() = ensure_references();
  }
  static std::string& oracle_error() {
    static std::string e;
    return e;
  }
};

TEST_P(OpsRef, Matches) {
  const OpCase& c = GetParam();
  ASSERT_TRUE(oracle_error().empty()) << oracle_error();
  auto ref = load_reference(c);
  ASSERT_TRUE(std::holds_alternative<std::vector<RefOutput>>(ref)) << c.name << ": " << std::get<std::string>(ref);

  const std::vector<Tensor> inputs = make_inputs(c);
  KernelCall call;
  call.src = kernel_files_from_source(c.legacy ? kLegacyKernels : kCurrentKernels,
                                      c.legacy ? "ops_legacy.py" : "ops_current.py");
  call.entry = c.entry;
  call.inputs = inputs;
  for (const auto& in : c.inputs) call.input_names.push_back(in.name);
  call.kwargs = c.kwargs;
  call.target = c.target;
  auto r = python_run(call);

  const std::string problem = r ? compare_outputs(c, inputs, *r, std::get<std::vector<RefOutput>>(ref))
                                : c.what + ": the kernel failed: " + r.error().format();
  if (!c.known_failure.empty()) {
    if (problem.empty())
      FAIL() << "known failure now matches the reference: remove its kKnownFailures entry (" << c.known_failure << ")";
    GTEST_SKIP() << "known failure: " << c.known_failure << "\n  " << problem;
  }
  EXPECT_TRUE(problem.empty()) << problem;
}

INSTANTIATE_TEST_SUITE_P(Ops, OpsRef, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& p) { return p.param.name; });

// The table itself: unique names, both dialects, every family present.
TEST(OpsRefTable, CoversTheOpsAndDialects) {
  std::set<std::string> names;
  size_t legacy = 0;
  std::set<std::string> entries;
  for (const OpCase& c : all_cases()) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    legacy += c.legacy;
    entries.insert(c.entry);
  }
  EXPECT_GT(legacy, all_cases().size() / 3);
  for (const char* e : {"tensor_tensor",
                        "tensor_scalar",
                        "scalar_tensor_tensor",
                        "activation",
                        "activation_reduce",
                        "nl_unary",
                        "nl_binary",
                        "tensor_reduce",
                        "nl_reduce",
                        "nc_matmul",
                        "nl_matmul",
                        "nc_transpose",
                        "nl_transpose",
                        "tensor_copy",
                        "nl_copy",
                        "memset",
                        "iota",
                        "affine_select",
                        "tensor_tensor_scan",
                        "bn_stats",
                        "bn_aggr",
                        "dma_copy",
                        "dma_store",
                        "nl_load_store",
                        "max8",
                        "find_index8",
                        "match_replace8",
                        "stream_shuffle",
                        "range_select",
                        "select_reduce",
                        "copy_predicated",
                        "partition_reduce",
                        "gather_flattened",
                        "local_gather",
                        "dma_transpose",
                        "sequence_bounds"})
    EXPECT_TRUE(entries.count(e)) << "no case runs " << e;
}

// The instructions of the opcode table (nki/opcodes.h) no case exercises yet, with the reason. A
// case counts for an opcode when its description names the opcode's docs key as a whole name
// ("nisa.tensor_tensor(op=add)", "nisa.bn_stats + nisa.bn_aggr"); an entry fails once a case covers
// its opcode, so that it goes.
const std::map<Opcode, const char*>& without_cases() {
  static const std::map<Opcode, const char*> kList = {
      {Opcode::kRng, "random values, not the device's: no NumPy reference (test_nki_random.cpp checks them)"},
      {Opcode::kDropout, "random values, not the device's: no NumPy reference (test_nki_random.cpp checks them)"},
      {Opcode::kSetRngSeed, "writes no tile: nothing to compare (test_nki_random.cpp checks its effect)"},
      {Opcode::kNonzeroWithCount,
       "data-dependent positions, no elementwise NumPy counterpart: test_nki_select.cpp "
       "(NonzeroWithCountOnEveryGpSimdCoresFirstPartition) checks it against expected indices"},
      {Opcode::kNcMatmulMx,
       "packed x4 operands NumPy has no type for: test_nki_mx.cpp checks it against a dequantizing "
       "reference"},
      {Opcode::kQuantizeMx, "packed x4 results NumPy has no type for: test_nki_mx.cpp checks it against a reference"},
  };
  return kList;
}

bool describes(const std::string& what, std::string_view key) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (size_t at = what.find(key); at != std::string::npos; at = what.find(key, at + 1)) {
    const size_t end = at + key.size();
    if ((at == 0 || !word(what[at - 1])) && (end == what.size() || (!word(what[end]) || what[end] == '.'))) return true;
  }
  return false;
}

TEST(OpsRefTable, EveryOpcodeHasCasesOrAReason) {
  for (const OpcodeInfo& row : kOpcodeTable) {
    bool covered = false;
    for (const OpCase& c : all_cases()) covered = covered || describes(c.what, row.docs_key);
    const auto it = without_cases().find(row.opcode);
    if (it == without_cases().end())
      EXPECT_TRUE(covered) << row.name << " (" << row.docs_key << ") has no op-reference case: add one, or an entry "
                           << "with its reason to without_cases()";
    else
      EXPECT_FALSE(covered) << row.name << " has cases now: drop its without_cases() entry (" << it->second << ")";
  }
}

}  // namespace
}  // namespace nki_agent
