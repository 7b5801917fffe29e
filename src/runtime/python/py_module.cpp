// The `_nkia_core` module: what the Python half of the kernel host calls into C++ for — tensors in
// HBM/SBUF/PSUM, indexing them into access patterns, the instructions of nki/isa.h, and the
// launch context. The dialect front ends (pylib/nki, pylib/neuronxcc) are thin Python over this.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <algorithm>

#include <frameobject.h>

#include "nki/checks.h"
#include "nki/error_catalogue.h"
#include "nki/isa_matmul_modes.h"
#include "nki/isa_scalar.h"
#include "nki/isa_select.h"
#include "nki/isa_vector.h"
#include "nki/written.h"
#include "runtime/python/launch.h"
#include "runtime/python/py_convert.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

thread_local LaunchContext* t_launch = nullptr;

// A failed instruction becomes the Python exception _nkia.errors.NkiError(code, message, hint); it
// unwinds through the kernel's frames, so the runner reports it at the kernel's own line.
// A Diagnostic that carries its own location (a rule about the kernel as a whole, found after it ran)
// keeps it: the runner reports NkiError.loc instead of the raising line.
SourceLoc caller_loc();

// A Diagnostic whose message depends on the values of a tensor (an index a tile held) ends the run
// whatever the kernel does with its exception: caught and parsed, it would let kernel code read
// values (docs/sandbox.md, "Values at trace time"). The run reports it (RunScope::fatal).
void end_run_with(const Diagnostic& d) {
  RunScope* run = current_run();
  if (run == nullptr || run->fatal) return;
  run->fatal = d;
  if (!run->fatal->loc.known()) run->fatal->at(caller_loc());
}

bool value_dependent(std::string_view code) {
  return code == "nkia_indirect_index_out_of_bounds";
}

[[noreturn]] void raise(const Diagnostic& d) {
  if (value_dependent(d.code)) end_run_with(d);
  py::object cls = py::module_::import("_nkia.errors").attr("NkiError");
  py::object err = cls(d.code, d.message, d.hint);
  if (d.loc.known()) err.attr("loc") = py::make_tuple(d.loc.file, d.loc.line);
  PyErr_SetObject(cls.ptr(), err.ptr());
  throw py::error_already_set();
}

void check(const Result<void>& r) {
  if (!r) raise(r.error());
}

// A kernel never sees its tensors' values (docs/sandbox.md, "Values at trace time"): inside a
// launch, or anywhere in a run whose entry is the kernel itself, reading them from Python is refused.
// Every route to values from Python comes through here, so however the call is spelt or reached
// (getattr, a bound method kept in a closure, operator.methodcaller, a helper module) it is refused.
void refuse_value_read_in_kernel(const char* what) {
  const RunScope* run = current_run();
  const bool sealed = run != nullptr && run->values_sealed;
  if (t_launch == nullptr && !sealed) return;
  raise(nki_error("nkia_trace_time_value_read",
                  fmt::format("{}: a kernel cannot read its tensors' values; NKI traces a kernel with shapes and "
                              "dtypes only, and the values exist on the device after the launch{}",
                              what, t_launch ? "" : " (this run's entry is the kernel, so it has no host side)"),
                  "compute with nl / nisa instructions on tiles; control flow and constants must come from "
                  "shapes, dtypes and arguments, never from data; read results in a host function after the "
                  "kernel returns"));
}

// The innermost frame in the kernel's own files: where an instruction is issued from.
SourceLoc caller_loc() {
  SourceLoc loc;
  PyFrameObject* f = PyEval_GetFrame();
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    std::string file = py::str(code->co_filename);
    Py_DECREF(code);
    if (!file.starts_with("<nki-agent>")) {
      loc.file = file;
      loc.line = PyFrame_GetLineNumber(f);
      break;
    }
    f = PyFrame_GetBack(f);  // a new reference since 3.9; the frames stay alive on the stack
    Py_XDECREF(f);
  }
  return loc;
}

ExecContext& exec_or_raise(const char* api) {
  if (!t_launch)
    raise(nki_error("err_nki_api_outside_of_nki_kernel",
                    fmt::format("'{}' was called outside of a running NKI kernel", api),
                    "call NKI APIs only inside a function decorated with @nki.jit, launched by calling it"));
  return t_launch->exec;
}

Buffer parse_buffer(const std::string& name) {
  if (name == "sbuf") return Buffer::kSbuf;
  if (name == "psum") return Buffer::kPsum;
  if (name == "shared_hbm") return Buffer::kSharedHbm;
  if (name == "hbm" || name == "private_hbm") return Buffer::kPrivateHbm;
  raise(nki_error("nkia_unknown_buffer", fmt::format("unknown buffer '{}'", name),
                  "use nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or nl.shared_hbm"));
}

DType parse_dtype(const std::string& name) {
  auto t = dtype_from_name(name);
  if (!t)
    raise(nki_error("nkia_unknown_dtype", fmt::format("unknown dtype '{}'", name),
                    "use an nl dtype such as nl.float32, nl.bfloat16 or nl.int32"));
  return *t;
}

BinaryOp parse_binary(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(BinaryOp::kRightShift); ++i)
    if (binary_op_name(static_cast<BinaryOp>(i)) == name) return static_cast<BinaryOp>(i);
  raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not an arithmetic operator", name),
                  "use an nl operator such as nl.add, nl.multiply, nl.maximum or nl.subtract"));
}

UnaryOp parse_unary(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(UnaryOp::kInvert); ++i)
    if (unary_op_name(static_cast<UnaryOp>(i)) == name) return static_cast<UnaryOp>(i);
  raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not an activation function", name),
                  "use an nl function such as nl.exp, nl.tanh, nl.gelu or nl.copy"));
}

MatmulPerfMode parse_perf_mode(const std::string& name) {
  if (auto pm = parse_matmul_perf_mode(name)) return *pm;
  raise(nki_error("nkia_bad_operand", fmt::format("unknown matmul perf_mode '{}'", name),
                  "use nisa.matmul_perf_mode.double_row (legacy: perf_mode=\"double_row_gen3\"), or leave "
                  "perf_mode out for the ordinary mode"));
}

Engine parse_engine(const std::string& name) {
  if (name == "vector") return Engine::kVector;
  if (name == "scalar") return Engine::kScalar;
  if (name == "gpsimd") return Engine::kGpSimd;
  if (name == "tensor") return Engine::kTensor;
  raise(nki_error("nkia_unknown_engine", fmt::format("unknown engine '{}'", name),
                  "use nisa.vector_engine, nisa.scalar_engine or nisa.gpsimd_engine"));
}

// Applies a Python index key (ints, slices, Ellipsis, None, or a tuple of them) to a view.
Tensor index_view(const Tensor& base, py::handle key, const std::string& what) {
  std::vector<py::object> items;
  if (py::isinstance<py::tuple>(key)) {
    for (py::handle h : key.cast<py::tuple>()) items.push_back(py::reinterpret_borrow<py::object>(h));
  } else {
    items.push_back(py::reinterpret_borrow<py::object>(key));
  }
  int consumed = 0, ellipses = 0;
  for (const auto& it : items) {
    if (it.is(py::ellipsis()))
      ++ellipses;
    else if (!it.is_none())
      ++consumed;
  }
  if (ellipses > 1) raise(nki_error("nkia_bad_index", "an index may hold only one '...'", "remove the extra '...'"));
  if (consumed > base.ndim())
    raise(nki_error("err_tensor_access_out_of_bound",
                    fmt::format("{} has {} dimensions but is indexed with {}", what, base.ndim(), consumed),
                    "index each dimension at most once"));
  Tensor v = base;
  int axis = 0;  // the next axis of v to index
  for (const auto& it : items) {
    if (it.is(py::ellipsis())) {
      axis += base.ndim() - consumed;  // '...' keeps the axes the other items do not name
      continue;
    }
    if (it.is_none()) {
      v = v.expand_dims(axis++);
      continue;
    }
    if (py::isinstance<py::slice>(it)) {
      auto sl = it.cast<py::slice>();
      auto get = [&](const char* attr) -> int64_t {
        py::object o = sl.attr(attr);
        return o.is_none() ? Slice::kNone : o.cast<int64_t>();
      };
      Slice s{get("start"), get("stop"), sl.attr("step").is_none() ? 1 : sl.attr("step").cast<int64_t>()};
      const int64_t n = v.shape()[static_cast<size_t>(axis)];
      // A static slice beyond the dimension is an out-of-bound access, not a silent clip.
      if (s.step > 0 && s.stop != Slice::kNone && s.stop > n)
        raise(nki_error("err_tensor_access_out_of_bound",
                        fmt::format("out-of-bound access for {} on dimension {}: index range [{}, {}] exceeds "
                                    "dimension size of {}",
                                    what, axis, s.start == Slice::kNone ? 0 : s.start, s.stop - 1, n),
                        "shrink the slice, or handle the ragged last tile with a smaller tile or a mask"));
      if (s.step == 0) raise(nki_error("nkia_bad_index", "slice step cannot be zero", "use a step of 1 or more"));
      v = v.slice(axis++, s);
      continue;
    }
    if (py::isinstance<py::int_>(it) || py::hasattr(it, "__index__")) {
      int64_t i = py::int_(it).cast<int64_t>();
      const int64_t n = v.shape()[static_cast<size_t>(axis)];
      if (i < -n || i >= n)
        raise(nki_error("err_tensor_access_out_of_bound",
                        fmt::format("out-of-bound access for {} on dimension {}: index {} exceeds dimension size of {}",
                                    what, axis, i, n),
                        "index within the tensor's shape"));
      v = v.select(axis, i);
      continue;
    }
    raise(nki_error("nkia_bad_index",
                    fmt::format("cannot index {} with a {}", what,
                                py::str(py::type::handle_of(it).attr("__name__")).cast<std::string>()),
                    "index with integers, slices (or nl.ds(start, size)) and '...'"));
  }
  return v;
}

// One indexed dimension of an affine key: a constant plus coefficient * (position along an axis of
// the index space), for each axis that appears.
using AffineDim = std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>;

// The access pattern that index tiles (nl.arange, nl.mgrid) select: every indexed dimension adds
// its coefficients times its stride to the strides of the index-space axes, and its constant to the
// offset; dimensions the key leaves out follow as they are.
Tensor affine_index(const Tensor& base, const std::vector<AffineDim>& dims, const std::vector<int64_t>& space,
                    const std::string& what) {
  if (dims.size() > static_cast<size_t>(base.ndim()))
    raise(nki_error("err_tensor_access_out_of_bound",
                    fmt::format("{} has {} dimensions but is indexed with {}", what, base.ndim(), dims.size()),
                    "index each dimension at most once"));
  Shape shape(space.begin(), space.end());
  Strides strides(shape.size(), 0);
  int64_t offset = base.offset();
  for (size_t d = 0; d < dims.size(); ++d) {
    const auto& [constant, terms] = dims[d];
    const int64_t stride = base.strides()[d];
    int64_t lo = constant, hi = constant;
    for (const auto& [axis, coef] : terms) {
      if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
        raise(nki_error("nkia_bad_index", "an index tile refers to an axis the index space lacks",
                        "reshape index tiles with [:, None] or [None, :]"));
      const int64_t span = coef * (shape[static_cast<size_t>(axis)] - 1);
      lo += std::min<int64_t>(0, span);
      hi += std::max<int64_t>(0, span);
      strides[static_cast<size_t>(axis)] += coef * stride;
    }
    const int64_t n = base.shape()[d];
    if (lo < 0 || hi >= n)
      raise(nki_error("err_tensor_access_out_of_bound",
                      fmt::format("out-of-bound access for {} on dimension {}: index range [{}, {}] exceeds "
                                  "dimension size of {}",
                                  what, d, lo, hi, n),
                      "shrink the index range, or cover the ragged last tile with a mask"));
    offset += constant * stride;
  }
  for (size_t d = dims.size(); d < static_cast<size_t>(base.ndim()); ++d) {
    shape.push_back(base.shape()[d]);
    strides.push_back(base.strides()[d]);
  }
  return Tensor(base.storage(), base.dtype(), shape, strides, offset);
}

// A shape given as separate ints or as one tuple/list: t.reshape(2, 64) or t.reshape((2, 64)).
std::vector<int64_t> shape_arg(const py::args& args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0]) && !py::hasattr(args[0], "__index__"))
    return args[0].cast<std::vector<int64_t>>();
  return args.cast<std::vector<int64_t>>();
}

// ---- view methods shared by Tensor and View ------------------------------------------------------

std::string tensor_label(const Access& a) {
  return a.tensor->name.empty() ? "tensor" : a.tensor->name;
}

// t.reshape(shape): a view with the same elements in a new shape. On-chip tensors keep their
// partition dimension; the view must be expressible with strides (no copy: writes must land).
Access reshape_view(const Access& a, const std::vector<int64_t>& shape) {
  Tensor v;
  try {
    v = a.view.reshape(Shape(shape.begin(), shape.end()));
  } catch (const std::invalid_argument& e) {
    raise(nki_error("nkia_bad_shape", fmt::format("cannot reshape {}: {}", tensor_label(a), e.what()),
                    "reshape to a shape with the same number of elements"));
  }
  if (v.storage() != a.view.storage())
    raise(nki_error("nkia_bad_shape",
                    fmt::format("reshaping {} from {} to {} needs a copy; a reshaped tensor must be a view",
                                tensor_label(a), shape_str(a.view.shape()), shape_str(v.shape())),
                    "reshape the whole (contiguous) tensor, or copy the data into a tensor of the new shape"));
  if (buffer_is_on_chip(a.buffer()) && (v.ndim() == 0 || a.view.ndim() == 0 || v.shape()[0] != a.view.shape()[0]))
    raise(nki_error("nkia_bad_shape",
                    fmt::format("reshaping {} from {} to {} changes its partition dimension", tensor_label(a),
                                shape_str(a.view.shape()), shape_str(v.shape())),
                    "keep dimension 0 (the partitions) of an SBUF/PSUM tensor; reshape only the free dimensions"));
  return Access{a.tensor, v};
}

Access broadcast_view(const Access& a, const std::vector<int64_t>& shape) {
  try {
    return Access{a.tensor, a.view.broadcast_to(Shape(shape.begin(), shape.end()))};
  } catch (const std::invalid_argument& e) {
    raise(nki_error("nkia_bad_shape", fmt::format("cannot broadcast {}: {}", tensor_label(a), e.what()),
                    "broadcast only dimensions of size 1"));
  }
}

Access permute_view(const Access& a, const std::vector<int>& perm) {
  std::vector<bool> seen(static_cast<size_t>(a.view.ndim()), false);
  bool ok = perm.size() == seen.size();
  for (int p : perm) {
    if (!ok || p < 0 || p >= a.view.ndim() || seen[static_cast<size_t>(p)]) {
      ok = false;
      break;
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    raise(nki_error(
        "nkia_bad_shape",
        fmt::format("{} is not a permutation of the {} axes of {}",
                    shape_str(std::vector<int64_t>(perm.begin(), perm.end())), a.view.ndim(), tensor_label(a)),
        "name every axis exactly once"));
  if (buffer_is_on_chip(a.buffer()) && !perm.empty() && perm[0] != 0)
    raise(nki_error("nkia_bad_shape", fmt::format("permuting {} moves its partition dimension", tensor_label(a)),
                    "keep axis 0 (the partitions) first; transpose across partitions with nisa.nc_transpose"));
  return Access{a.tensor, a.view.transpose(perm)};
}

Access pattern_view(const Access& a, const std::vector<std::pair<int64_t, int64_t>>& pattern, int64_t offset);
Access to_access(py::handle h, const char* role);

// t.ap(pattern=[[row, P], [step, num], ...], offset=0, vector_offset=idx, indirect_dim=0): vector
// indirection, partition p of the access reading (or writing) row idx[p] of the HBM tensor t: the
// elements offset + idx[p] * row + sum(step * i) over the remaining pairs, where row is the size of
// one index of axis 0 (prod(t.shape[1:])) and must be the first pair's step, and P the partitions of
// idx ([P, 1]). nisa.dma_copy gathers from such an access and scatters into one (the rows as an
// HBM view, the index as given: _nkia.lang._IndirectAp).
py::object indirect_ap(const Access& a, const std::vector<std::pair<int64_t, int64_t>>& pattern, int64_t offset,
                       py::handle scalar_offset, py::handle vector_offset, int64_t indirect_dim) {
  const std::string what = tensor_label(a);
  auto bad = [&](const std::string& message, const std::string& hint) {
    raise(nki_error("nkia_bad_operand", message, hint));
  };
  if (!scalar_offset.is_none())
    bad(fmt::format("{}.ap() takes scalar_offset or vector_offset, not both", what),
        "index one row per partition with vector_offset, or move the whole access with scalar_offset");
  if (!buffer_is_hbm(a.buffer()))
    bad(fmt::format("{}.ap(vector_offset=...) indexes rows of an HBM tensor, but {} is in {}", what, what,
                    buffer_name(a.buffer())),
        "call .ap(vector_offset=idx, indirect_dim=0) on the HBM side of the dma_copy");
  const Shape& shape = a.tensor->data.shape();
  if (indirect_dim != 0 || shape.empty())
    bad(fmt::format("{}.ap(vector_offset=...) indexes axis 0 only, not indirect_dim={}", what, indirect_dim),
        "pass indirect_dim=0: each partition's index names a row (an index of axis 0)");
  int64_t row = 1;
  for (size_t d = 1; d < shape.size(); ++d) row *= shape[d];
  if (pattern.size() < 2 || pattern[0].first != row)
    bad(fmt::format("{}.ap(vector_offset=...) takes a pattern [[{}, P], [step, num], ...]: the first pair's step is "
                    "the row size {} of {}",
                    what, row, row, shape_str(shape)),
        fmt::format("write pattern=[[{}, P], [1, F]] to move F elements of each indexed row", row));
  // One row number per index of the first pair: an [R, 1] tile (dma_copy: R partitions), or for a
  // gather-transpose a [128, N] one read column by column (R = 128 * N).
  const Access index = to_access(vector_offset, "vector_offset");
  if (!buffer_is_on_chip(index.buffer()) || index.view.ndim() != 2 || index.view.numel() != pattern[0].second ||
      (index.shape()[1] != 1 && index.shape()[0] != 128))
    raise(nki_error("nkia_indirect_index_tile",
                    fmt::format("{}.ap(vector_offset={}) needs an SBUF [{}, 1] tile: one row number for each of the "
                                "pattern's {} rows ([128, {}] for a dma_transpose gathering more than 128)",
                                what, index.describe(), pattern[0].second, pattern[0].second, pattern[0].second / 128),
                    "load the row numbers into an SBUF tile of shape [R, 1] (an integer dtype)"));
  // The rows as a view [rows, num...]: every row whose elements the pattern keeps inside the tensor.
  int64_t reach = offset;
  for (size_t k = 1; k < pattern.size(); ++k) reach += std::max<int64_t>(0, pattern[k].first * (pattern[k].second - 1));
  const int64_t rows =
      std::min(shape[0], reach < a.tensor->data.numel() ? (a.tensor->data.numel() - 1 - reach) / row + 1 : 0);
  if (rows <= 0)
    raise(nki_error("err_tensor_access_out_of_bound",
                    fmt::format("out-of-bound access for {}: the pattern with offset {} reaches past the tensor's end "
                                "in every row",
                                what, offset),
                    "keep offset + sum(step * (num - 1)) within one row"));
  std::vector<std::pair<int64_t, int64_t>> rows_pattern = pattern;
  rows_pattern[0] = {row, rows};
  const Access rows_view = pattern_view(a, rows_pattern, offset);
  Shape out_shape{pattern[0].second};
  for (size_t k = 1; k < pattern.size(); ++k) out_shape.push_back(pattern[k].second);
  return py::module_::import("_nkia.lang")
      .attr("_IndirectAp")(rows_view, vector_offset, py::tuple(py::cast(out_shape)));
}

// t.ap(pattern=[[step, num], ...], offset=0): the hardware access pattern over the whole tensor's
// storage (the current view is ignored). Steps and the offset are in elements; for SBUF/PSUM the
// first pair is the partition dimension and its step must be the per-partition element count.
Access pattern_view(const Access& a, const std::vector<std::pair<int64_t, int64_t>>& pattern, int64_t offset) {
  const Tensor& base = a.tensor->data;
  const std::string what = tensor_label(a);
  if (pattern.empty())
    raise(nki_error("nkia_bad_index", fmt::format("{}.ap() needs at least one [step, num] pair", what),
                    "write t.ap(pattern=[[step, num], ...], offset=0)"));
  Shape shape;
  Strides strides;
  int64_t lo = offset, hi = offset;
  for (const auto& [step, num] : pattern) {
    if (num <= 0)
      raise(nki_error("nkia_bad_index", fmt::format("{}.ap(): a pattern count must be positive, got {}", what, num),
                      "give every [step, num] pair num >= 1"));
    shape.push_back(num);
    strides.push_back(step);
    lo += std::min<int64_t>(0, step * (num - 1));
    hi += std::max<int64_t>(0, step * (num - 1));
  }
  const int64_t total = base.numel();
  if (buffer_is_on_chip(a.buffer()) && base.ndim() > 0) {
    const int64_t per_partition = base.shape()[0] ? total / base.shape()[0] : 0;
    if (pattern[0].first != per_partition && pattern[0].second > 1)
      raise(nki_error("nkia_bad_index",
                      fmt::format("{}.ap(): the partition step is {} but each partition of {} holds {} elements", what,
                                  pattern[0].first, shape_str(base.shape()), per_partition),
                      "make the first [step, num] pair [elements per partition, partitions]"));
  }
  if (lo < 0 || hi >= total)
    raise(nki_error("err_tensor_access_out_of_bound",
                    fmt::format("out-of-bound access for {}: the access pattern reaches elements [{}, {}] of a tensor "
                                "of {} elements",
                                what, lo, hi, total),
                    "keep offset + sum(step * (num - 1)) within the tensor"));
  return Access{a.tensor, Tensor(base.storage(), base.dtype(), shape, strides, base.offset() + offset)};
}

// .ap()'s dynamic offset: scalar_offset (an int — a loop variable of a dynamic loop — or a 1 x 1
// tensor holding the value, read now: instructions run in program order) times the elements of one
// index of `indirect_dim`, prod(base.shape[indirect_dim + 1:]). A timing-only run computes no
// values, so a tensor's offset reads as 0 there. (vector_offset is indirect_ap's.)

int64_t ap_dynamic_offset(const Access& a, py::handle scalar_offset, int64_t indirect_dim) {
  const std::string what = tensor_label(a);
  if (scalar_offset.is_none()) return 0;
  const Shape& shape = a.tensor->data.shape();
  if (indirect_dim < 0 || indirect_dim >= static_cast<int64_t>(shape.size()))
    raise(nki_error("nkia_bad_index",
                    fmt::format("{}.ap(): indirect_dim {} is not an axis of {}", what, indirect_dim, shape_str(shape)),
                    "give indirect_dim the axis that scalar_offset indexes (0 for rows)"));
  int64_t row = 1;
  for (size_t d = static_cast<size_t>(indirect_dim) + 1; d < shape.size(); ++d) row *= shape[d];
  int64_t value = 0;
  if (py::isinstance<py::int_>(scalar_offset) && !py::isinstance<py::bool_>(scalar_offset)) {
    value = scalar_offset.cast<int64_t>();
  } else {
    const Access s = to_access(scalar_offset, "scalar_offset");
    if (s.view.numel() != 1 || dtype_is_float(s.dtype()))
      raise(nki_error(
          "nkia_bad_operand",
          fmt::format("{}.ap(scalar_offset=...) takes a 1 x 1 integer tensor or an int, not {}", what, s.describe()),
          "hold the offset in a [1, 1] nl.int32 SBUF tile (or pass a loop variable)"));
    ExecContext& ctx = exec_or_raise("ap");
    if (ctx.compute) {
      settle(*s.tensor);  // its poison and pending copies, as any read
      value = static_cast<int64_t>(s.view.item());
    }
  }
  return value * row;
}

// t.ap(pattern, offset, scalar_offset=, vector_offset=, indirect_dim=). An offset read from a tile
// makes the view's bounds depend on a value: a bounds error then ends the run (end_run_with).
py::object ap_view(const Access& a, const std::vector<std::pair<int64_t, int64_t>>& pattern, int64_t offset,
                   py::handle scalar_offset, py::handle vector_offset, int64_t indirect_dim) {
  if (!vector_offset.is_none()) return indirect_ap(a, pattern, offset, scalar_offset, vector_offset, indirect_dim);
  const bool from_tile = !scalar_offset.is_none() && !py::isinstance<py::int_>(scalar_offset);
  const int64_t dynamic = ap_dynamic_offset(a, scalar_offset, indirect_dim);
  try {
    return py::cast(pattern_view(a, pattern, offset + dynamic));
  } catch (py::error_already_set& e) {
    if (from_tile && e.matches(py::module_::import("_nkia.errors").attr("NkiError")))
      end_run_with(nki_error(py::str(e.value().attr("code")).cast<std::string>(),
                             py::str(e.value()).cast<std::string>(),
                             py::str(e.value().attr("hint")).cast<std::string>()));
    throw;
  }
}

// The rules every operand obeys, whatever the instruction: it is in scope (not a tensor of a loop
// iteration that has ended), and a destination is not an immutable kernel input.
const Access& checked_operand(const Access& a, const char* role) {
  // A name rebound inside a loop body (acc = nl.add(acc, ...)) is caught at its first use out of
  // scope: in the next iteration, or after the loop.
  if (t_launch && !t_launch->scope_open(a.tensor->scope))
    raise(nki_error("err_local_variable_used_out_of_scope",
                    fmt::format("{} ('{}') was created inside a loop iteration that has ended (a tensor belongs to "
                                "the loop body, and the iteration, that created it)",
                                a.describe(), role),
                    "create the tensor before the loop and write into it with slice assignment (acc[...] = ... or "
                    "acc[...] += ...), instead of rebinding the name inside the loop"));
  const std::string_view r(role);
  if (a.tensor->immutable && (r == "dst" || r == "dst_idx" || r == "reduce_res"))
    raise(nki_error("err_cannot_update_immutable_parameter",
                    fmt::format("the kernel writes into its input {}", a.describe()),
                    "store results into a separate output (nl.ndarray(..., buffer=nl.shared_hbm)) and return it; "
                    "to update an input in place, annotate it nt.mutable_tensor and return it"));
  return a;
}

// An instruction is about to access the tensor: it is live at least until then.
void touch(const Access& a) {
  if (a.tensor->live && t_launch) a.tensor->live->touch(t_launch->instruction_clock());
}

// Drops the spans that can overlap nothing to come: their tensor is gone (the list holds the last
// reference) and they ended before every tensor still alive began.
void prune_ranges(std::vector<std::shared_ptr<LiveRange>>& ranges, int64_t now) {
  int64_t open_first = now;
  for (const auto& r : ranges)
    if (r.use_count() > 1 && r->first >= 0) open_first = std::min(open_first, r->first);
  std::erase_if(ranges,
                [&](const std::shared_ptr<LiveRange>& r) { return r.use_count() == 1 && r->last < open_first; });
}

std::shared_ptr<LiveRange> new_range(const NkiTensor& t, int64_t partitions) {
  auto r = std::make_shared<LiveRange>();
  r->bytes = t.data.nbytes() / partitions;
  r->loc = caller_loc();
  return r;
}

// Tracks a new PSUM tensor's live span for the launch's capacity check. Kernels that allocate PSUM
// tiles without end keep the list short: now and then the spans are checked as they stand, and those
// that can overlap nothing to come are dropped.
void track_psum(NkiTensor& t, int64_t partitions) {
  if (!t_launch || t.buffer != Buffer::kPsum || partitions <= 0) return;
  auto& ranges = t_launch->psum_ranges;
  if (ranges.size() >= 4096) {
    check(check_psum_capacity(t_launch->exec, ranges));
    prune_ranges(ranges, t_launch->instruction_clock());
  }
  t.live = new_range(t, partitions);
  ranges.push_back(t.live);
}

// Tracks a new SBUF tile's live span for the launch's capacity warning, the same way. Every nl call
// makes a tile, so the list is folded into the launch's SbufUse and pruned whenever it has doubled
// since the last time (tiles a kernel keeps alive stay in it).
void track_sbuf(NkiTensor& t, int64_t partitions) {
  if (!t_launch || t.buffer != Buffer::kSbuf || partitions <= 0) return;
  LaunchContext& launch = *t_launch;
  auto& ranges = launch.sbuf_ranges;
  if (ranges.size() >= launch.sbuf_prune_at) {
    note_sbuf_use(launch.sbuf, launch.exec, ranges);
    prune_ranges(ranges, launch.instruction_clock());
    launch.sbuf_prune_at = std::max<size_t>(4096, 2 * ranges.size());
  }
  t.live = new_range(t, partitions);
  ranges.push_back(t.live);
}

// The direct-allocation checks of an access (nki/placement.h): role "value" is the source of
// `t[...] = value`, which the compiler folds into the instruction that produced value.
void track_access(const Access& a, const char* role) {
  if (!t_launch) return;
  const std::string_view r(role);
  const bool write = r == "dst" || r == "dst_idx" || r == "reduce_res";
  check(t_launch->alloc.on_access(a, write, r == "value", t_launch->instruction_clock()));
}

Access to_access(py::handle h, const char* role) {
  if (py::isinstance<Access>(h)) {
    Access a = h.cast<Access>();
    checked_operand(a, role);
    touch(a);
    track_access(a, role);
    return a;
  }
  if (py::isinstance<NkiTensor>(h)) {
    Access a = whole(h.cast<std::shared_ptr<NkiTensor>>());
    checked_operand(a, role);
    touch(a);
    track_access(a, role);
    return a;
  }
  // A deferred result (a legacy matmul awaiting `psum += ...`) used as an operand: materialise it.
  if (py::hasattr(h, "_nkia_tile")) return to_access(h.attr("_nkia_tile"), role);
  raise(nki_error("nkia_bad_operand",
                  fmt::format("operand '{}' is a {}, not an NKI tensor", role,
                              py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>()),
                  "pass a tensor or a slice of one (load HBM data with nl.load first)"));
}

TensorOrigin parse_origin(const std::string& name) {
  if (name == "result") return TensorOrigin::kResult;
  if (name == "scratch") return TensorOrigin::kScratch;
  return TensorOrigin::kExplicit;
}

// A placement from the front end: None, or (direct, [(bank, start_partition, byte_offset), ...]) with
// one place per logical block (nki/placement.h).
std::optional<Placement> parse_placement(py::handle h) {
  if (h.is_none()) return std::nullopt;
  auto t = h.cast<py::tuple>();
  Placement p;
  p.direct = t[0].cast<bool>();
  for (py::handle e : t[1].cast<py::list>()) {
    auto [bank, partition, offset] = e.cast<std::tuple<int64_t, int64_t, int64_t>>();
    p.tiles.push_back(TilePlace{bank, partition, offset});
  }
  return p;
}

// When a tensor the kernel creates gets its poison (nki/nki_tensor.h). Timing-only runs leave fresh
// on-chip tiles unfilled (nothing computes on them) and poison HBM tensors, which may be returned,
// at once (nothing will be written into them); eager-state runs poison at once; others lazily.
Poison fresh_poison(const ExecContext& ctx, Buffer b) {
  if (!ctx.compute) return buffer_is_on_chip(b) ? Poison::kNone : Poison::kNow;
  return ctx.eager_state ? Poison::kNow : Poison::kLazy;
}

// `blocks`: leading block dimensions before the partition dimension (legacy nl.par_dim).
// `origin`: "explicit" (the kernel's nl.ndarray / nl.zeros ...), "result" (an nl / nisa call's result
// tile) or "scratch" (part of one instruction's emulation); `placement`: see parse_placement.
std::shared_ptr<NkiTensor> new_tensor(const std::vector<int64_t>& shape, const std::string& dtype,
                                      const std::string& buffer, const std::string& name, int blocks,
                                      bool auto_allocated, const std::string& origin, py::handle placement) {
  ExecContext& ctx = exec_or_raise("ndarray");
  const Buffer b = parse_buffer(buffer);
  for (int64_t d : shape)
    if (d < 0)
      raise(nki_error("nkia_bad_shape", fmt::format("negative dimension in shape {}", shape_str(shape)),
                      "use sizes of 0 or more"));
  if (buffer_is_on_chip(b)) {
    if (blocks < 0 || static_cast<size_t>(blocks) >= shape.size()) blocks = 0;
    if (shape.size() - static_cast<size_t>(blocks) < 2)
      raise(nki_error("nkia_insufficient_rank",
                      fmt::format("an {} tensor needs a partition and a free dimension, got shape {}", buffer_name(b),
                                  shape_str(shape)),
                      "give on-chip tiles at least two dimensions, e.g. (128, 1) instead of (128,)"));
    const int64_t p = shape[static_cast<size_t>(blocks)];
    if (p > ctx.target->partitions)
      raise(nki_error("err_num_partition_exceed_arch_limit",
                      fmt::format("number of partitions {} of the {} tensor {} exceeds the architecture limit of {}", p,
                                  buffer_name(b), shape_str(shape), ctx.target->partitions),
                      fmt::format("tile the partition dimension in blocks of at most {} (nl.tile_size.pmax)",
                                  ctx.target->partitions)));
  }
  const DType t = parse_dtype(dtype);
  LaunchContext& launch = *t_launch;
  const int64_t scope = launch.current_scope();
  if (b == Buffer::kSharedHbm && scope != 0)
    raise(nki_error("err_shared_hbm_must_in_kernel_level",
                    fmt::format("a shared_hbm tensor {} {} is created inside a loop", dtype_name(t), shape_str(shape)),
                    "create outputs once, at the kernel's top level, large enough for every iteration, and index "
                    "them inside the loop"));
  if (b == Buffer::kSharedHbm) {
    if (launch.shared_next < launch.shared_hbm.size()) {  // a later SPMD instance: the first one's tensor
      auto& same = launch.shared_hbm[launch.shared_next++];
      if (same->data.shape() != Shape(shape.begin(), shape.end()) || same->data.dtype() != t)
        raise(nki_error(
            "nkia_bad_shape",
            fmt::format("SPMD instances allocate different shared_hbm tensors: {} {} here, {} {} in the "
                        "first instance",
                        dtype_name(t), shape_str(shape), dtype_name(same->data.dtype()), shape_str(same->data.shape())),
            "allocate the same outputs, in the same order, in every instance"));
      return same;
    }
    launch.shared_hbm.push_back(make_nki_tensor(shape, t, b, name, fresh_poison(ctx, b)));
    launch.shared_next++;
    return launch.shared_hbm.back();
  }
  auto tensor = make_nki_tensor(shape, t, b, name, fresh_poison(ctx, b));
  tensor->created_tag = ctx.affine_tag;
  tensor->scope = scope;
  if (buffer_is_on_chip(b)) tensor->blocks = blocks;
  // PSUM's capacity check counts auto-allocated tiles; block tensors (whose blocks the compiler
  // may rotate through fewer buffers) and tensors the kernel placed itself are left out.
  // SBUF's capacity warning counts the same tiles.
  if (b == Buffer::kPsum && auto_allocated && blocks == 0) track_psum(*tensor, shape[0]);
  if (b == Buffer::kSbuf && auto_allocated && blocks == 0) track_sbuf(*tensor, shape[0]);
  const std::optional<Placement> place = parse_placement(placement);
  check(launch.alloc.on_create(ctx, tensor, parse_origin(origin), place ? &*place : nullptr, launch.first_iterations(),
                               caller_loc()));
  return tensor;
}

// The loops of nl.affine_range / nl.sequential_range: the Python iterator calls loop_begin once,
// loop_next before each iteration and loop_end when the loop is left. Affine loops tag HBM writes;
// scoped loops (the legacy dialect, whose tracer gives loop bodies block scope) own the tensors
// their iterations create. The current dialect unrolls loops with Python's scoping.
int64_t loop_begin(bool affine, bool scoped) {
  exec_or_raise(affine ? "affine_range" : "sequential_range");
  LaunchContext& launch = *t_launch;
  LaunchContext::Loop l;
  l.id = launch.next_id++;
  l.affine = affine;
  l.scoped = scoped;
  launch.loops.push_back(l);
  return l.id;
}

void refresh_affine_tag(LaunchContext& launch) {
  launch.exec.affine_tag = 0;
  for (const auto& l : launch.loops)
    if (l.affine && l.iteration >= 0) launch.exec.affine_tag = (l.id << 32) | (l.iteration & 0xffffffff);
}

// The end of an iteration of an affine loop: its reads of values other iterations wrote.
void end_iteration(const LaunchContext::Loop& l) {
  if (l.affine && l.iteration >= 0)
    check(check_carried_reads(t_launch->exec, (l.id << 32) | (l.iteration & 0xffffffff)));
}

void loop_next(int64_t id) {
  if (!t_launch) return;
  for (auto& l : t_launch->loops)
    if (l.id == id) {
      end_iteration(l);
      ++l.iteration;
      l.scope = t_launch->next_id++;
    }
  refresh_affine_tag(*t_launch);
}

// After the last iteration of a loop that ran to its end (not left by an exception or a break).
void loop_done(int64_t id) {
  if (!t_launch) return;
  for (const auto& l : t_launch->loops)
    if (l.id == id) end_iteration(l);
}

// Leaves loop `id` (and any inner loop a `break` or an exception left open).
void loop_end(int64_t id) {
  if (!t_launch) return;
  auto& loops = t_launch->loops;
  for (size_t i = 0; i < loops.size(); ++i)
    if (loops[i].id == id) {
      loops.resize(i);
      break;
    }
  refresh_affine_tag(*t_launch);
}

// Runs `func` once per SPMD instance (serially, as on one NeuronCore) and returns the first
// instance's result: outputs are shared_hbm tensors, the same objects in every instance.
py::object launch(py::function func, py::list args, py::dict kwargs, std::vector<int64_t> grid) {
  if (t_launch) throw py::value_error("a kernel launch is already running on this thread");
  LaunchContext ctx;
  ctx.grid = grid;
  ctx.program_id.assign(grid.size(), 0);
  begin_launch(ctx);
  t_launch = &ctx;
  struct Reset {
    LaunchContext& ctx;
    ~Reset() {
      end_launch(ctx);  // the trace goes to the run's, even from a failed launch
      t_launch = nullptr;
    }
  } reset{ctx};
  int64_t instances = 1;
  for (int64_t g : grid) instances *= g;
  py::object first;
  for (int64_t i = 0; i < instances; ++i) {
    int64_t rem = i;
    for (size_t d = grid.size(); d-- > 0;) {
      ctx.program_id[d] = rem % grid[d];
      rem /= grid[d];
    }
    ctx.shared_next = 0;
    ctx.psum_ranges.clear();
    ctx.sbuf_ranges.clear();
    ctx.sbuf_prune_at = 4096;
    py::object r = func(*args, **kwargs);
    check(check_psum_capacity(ctx.exec, ctx.psum_ranges));
    note_sbuf_use(ctx.sbuf, ctx.exec, ctx.sbuf_ranges);
    if (i == 0) first = r;
  }
  if (auto w = sbuf_capacity_warning(ctx.exec, ctx.sbuf)) ctx.exec.warnings.add(std::move(*w));
  return first;
}

}  // namespace

LaunchContext* current_launch() {
  return t_launch;
}

// Called by python_host_init so that the linker keeps this file, and with it the registration of
// the embedded module below, when the host comes from a static library.
void link_nkia_core_module() {}

}  // namespace nki_agent

PYBIND11_EMBEDDED_MODULE(_nkia_core, m) {
  using namespace nki_agent;
  m.doc() = "nki-agent's C++ core, as the NKI modules see it";

  py::list narrow;
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_is_numpy_foreign(static_cast<DType>(i))) narrow.append(std::string(dtype_name(static_cast<DType>(i))));
  m.attr("NARROW_DTYPES") = py::tuple(narrow);

  py::class_<NkiTensor, std::shared_ptr<NkiTensor>>(m, "Tensor", py::dynamic_attr())
      .def_static(
          "from_numpy",
          [](py::handle arr, const std::string& dtype, const std::string& name) {
            auto t = numpy_to_tensor(arr, dtype, name.empty() ? "argument" : name);
            if (!t) throw py::value_error(t.error().message);
            auto h = std::make_shared<NkiTensor>();
            h->data = std::move(*t);
            h->name = name;
            h->buffer = Buffer::kSharedHbm;
            h->kernel_argument = true;
            return h;
          },
          py::arg("array"), py::arg("dtype") = "", py::arg("name") = "")
      .def_property_readonly("shape", [](const NkiTensor& h) { return py::tuple(py::cast(h.data.shape())); })
      .def_property_readonly("dtype_str", [](const NkiTensor& h) { return std::string(dtype_name(h.data.dtype())); })
      .def_property_readonly("ndim", [](const NkiTensor& h) { return h.data.ndim(); })
      .def_property_readonly("name", [](const NkiTensor& h) { return h.name; })
      .def_property_readonly("buffer", [](const NkiTensor& h) { return std::string(buffer_name(h.buffer)); })
      .def_readwrite("written", &NkiTensor::written)
      .def("numpy",
           [](NkiTensor& h) {
             refuse_value_read_in_kernel("Tensor.numpy()");
             settle(h);
             return tensor_to_numpy(h.data);
           })
      .def("view",
           [](const std::shared_ptr<NkiTensor>& h, py::handle key) {
             return Access{h, index_view(h->data, key, h->name.empty() ? "tensor" : h->name)};
           })
      .def("affine_view",
           [](const std::shared_ptr<NkiTensor>& h, const std::vector<AffineDim>& dims,
              const std::vector<int64_t>& space) {
             return Access{h, affine_index(h->data, dims, space, h->name.empty() ? "tensor" : h->name)};
           })
      .def("reshape",
           [](const std::shared_ptr<NkiTensor>& h, py::args shape) { return reshape_view(whole(h), shape_arg(shape)); })
      .def("broadcast_to", [](const std::shared_ptr<NkiTensor>& h,
                              std::vector<int64_t> shape) { return broadcast_view(whole(h), shape); })
      .def("permute",
           [](const std::shared_ptr<NkiTensor>& h, py::args perm) {
             auto p = shape_arg(perm);
             return permute_view(whole(h), std::vector<int>(p.begin(), p.end()));
           })
      .def(
          "ap",
          [](const std::shared_ptr<NkiTensor>& h, std::vector<std::pair<int64_t, int64_t>> pattern, int64_t offset,
             py::handle scalar_offset, py::handle vector_offset, int64_t indirect_dim) {
            return ap_view(whole(h), pattern, offset, scalar_offset, vector_offset, indirect_dim);
          },
          py::arg("pattern"), py::arg("offset") = 0, py::arg("scalar_offset") = py::none(),
          py::arg("vector_offset") = py::none(), py::arg("indirect_dim") = 0)
      .def("__repr__", [](const NkiTensor& h) {
        return fmt::format("<nki tensor '{}' {}{} in {}>", h.name, dtype_name(h.data.dtype()),
                           shape_str(h.data.shape()), buffer_name(h.buffer));
      });

  py::class_<Access>(m, "View", py::dynamic_attr())
      .def_property_readonly("shape", [](const Access& a) { return py::tuple(py::cast(a.view.shape())); })
      .def_property_readonly("dtype_str", [](const Access& a) { return std::string(dtype_name(a.view.dtype())); })
      .def_property_readonly("ndim", [](const Access& a) { return a.view.ndim(); })
      .def_property_readonly("buffer", [](const Access& a) { return std::string(buffer_name(a.buffer())); })
      .def_property_readonly("tensor", [](const Access& a) { return a.tensor; })
      .def("numpy",
           [](const Access& a) {
             refuse_value_read_in_kernel("View.numpy()");
             settle(*a.tensor);
             return tensor_to_numpy(a.view);
           })
      .def("view",
           [](const Access& a, py::handle key) {
             return Access{a.tensor, index_view(a.view, key, a.tensor->name.empty() ? "tensor" : a.tensor->name)};
           })
      .def("affine_view",
           [](const Access& a, const std::vector<AffineDim>& dims, const std::vector<int64_t>& space) {
             return Access{a.tensor,
                           affine_index(a.view, dims, space, a.tensor->name.empty() ? "tensor" : a.tensor->name)};
           })
      .def("reshape", [](const Access& a, py::args shape) { return reshape_view(a, shape_arg(shape)); })
      .def("broadcast_to", [](const Access& a, std::vector<int64_t> shape) { return broadcast_view(a, shape); })
      .def("permute",
           [](const Access& a, py::args perm) {
             auto p = shape_arg(perm);
             return permute_view(a, std::vector<int>(p.begin(), p.end()));
           })
      .def(
          "ap",
          [](const Access& a, std::vector<std::pair<int64_t, int64_t>> pattern, int64_t offset,
             py::handle scalar_offset, py::handle vector_offset,
             int64_t indirect_dim) { return ap_view(a, pattern, offset, scalar_offset, vector_offset, indirect_dim); },
          py::arg("pattern"), py::arg("offset") = 0, py::arg("scalar_offset") = py::none(),
          py::arg("vector_offset") = py::none(), py::arg("indirect_dim") = 0)
      .def("__repr__", [](const Access& a) { return fmt::format("<nki view {}>", a.describe()); });

  py::class_<LaunchContext>(m, "LaunchContext")
      .def_readonly("grid", &LaunchContext::grid)
      .def_readonly("program_id", &LaunchContext::program_id)
      .def_property_readonly("target", [](const LaunchContext& c) { return std::string(c.exec.target->name); })
      .def_property_readonly("trace_size", [](const LaunchContext& c) { return c.exec.trace.size(); })
      .def_property_readonly("direct_allocation", [](const LaunchContext& c) { return c.alloc.direct(); });
  m.def(
      "current_context", [] { return current_launch(); }, py::return_value_policy::reference);
  m.def("launch", &launch, py::arg("func"), py::arg("args"), py::arg("kwargs"), py::arg("grid"));
  // The entry of the run is a kernel: from now on nothing in the run reads values from Python (the
  // outputs leave as HBM tensors). There is no way back.
  m.def("seal_values", [] {
    if (RunScope* run = current_run()) run->values_sealed = true;
  });
  m.def("values_sealed", [] { return current_run() != nullptr && current_run()->values_sealed; });
  // An argument tensor made by the host without a name takes its parameter's, for diagnostics.
  m.def("name_argument", [](const std::shared_ptr<NkiTensor>& t, const std::string& name) {
    if (t->kernel_argument && t->name.empty()) t->name = name;
  });

  m.def("promote", [](const std::string& a, const std::string& b) {
    return std::string(dtype_name(promote_types(parse_dtype(a), parse_dtype(b))));
  });
  m.def("scalar_dtype", [](py::handle v) {
    ScalarKind k = py::isinstance<py::bool_>(v) ? ScalarKind::kBool
                                                : (py::isinstance<py::int_>(v) ? ScalarKind::kInt : ScalarKind::kFloat);
    return std::string(dtype_name(scalar_dtype(k)));
  });
  m.def("loop_begin", &loop_begin, py::arg("affine"), py::arg("scoped"));
  m.def("loop_next", &loop_next);
  m.def("loop_done", &loop_done);
  m.def("loop_end", &loop_end);
  m.def("set_immutable", [](const std::shared_ptr<NkiTensor>& t, bool v) { t->immutable = v; });
  m.def("ndarray", &new_tensor, py::arg("shape"), py::arg("dtype"), py::arg("buffer"), py::arg("name") = "",
        py::arg("blocks") = 0, py::arg("auto_allocated") = true, py::arg("origin") = "explicit",
        py::arg("placement") = py::none());
  // A scratch tile an instruction's emulation read becomes the result the kernel sees.
  m.def("mark_result", [](const std::shared_ptr<NkiTensor>& t) {
    if (t_launch) t_launch->alloc.mark_result(t, caller_loc());
  });
  m.def(
      "dma_copy",
      [](py::handle dst, py::handle src, const std::string& rmw) {
        ExecContext& ctx = exec_or_raise("dma_copy");
        check(isa_dma_copy(ctx, to_access(dst, "dst"), to_access(src, "src"), caller_loc(),
                           rmw.empty() ? std::nullopt : std::optional<BinaryOp>(parse_binary(rmw))));
      },
      py::arg("dst"), py::arg("src"), py::arg("rmw") = "");
  m.def("dma_transpose", [](py::handle dst, py::handle src, const std::vector<int>& axes) {
    ExecContext& ctx = exec_or_raise("dma_transpose");
    check(isa_dma_transpose(ctx, to_access(dst, "dst"), to_access(src, "src"), axes, caller_loc()));
  });
  m.def("tensor_tensor", [](py::handle dst, py::handle a, py::handle b, const std::string& op) {
    ExecContext& ctx = exec_or_raise("tensor_tensor");
    check(isa_tensor_tensor(ctx, to_access(dst, "dst"), to_access(a, "data1"), to_access(b, "data2"), parse_binary(op),
                            caller_loc()));
  });
  m.def("tensor_scalar", [](py::handle dst, py::handle src, const std::string& op, double scalar, bool reverse) {
    ExecContext& ctx = exec_or_raise("tensor_scalar");
    check(isa_tensor_scalar(ctx, to_access(dst, "dst"), to_access(src, "data"), parse_binary(op), scalar, reverse,
                            caller_loc()));
  });
  m.def("tensor_scalar_tile",
        [](py::handle dst, py::handle src, const std::string& op, py::handle operand, bool reverse) {
          ExecContext& ctx = exec_or_raise("tensor_scalar");
          check(isa_tensor_scalar_tile(ctx, to_access(dst, "dst"), to_access(src, "data"), parse_binary(op),
                                       to_access(operand, "operand"), reverse, caller_loc()));
        });
  // Affine expressions cross as (constant, [(axis, coef), ...]).
  auto affine = [](int64_t constant, const std::vector<std::pair<int, int64_t>>& terms) {
    AffineExpr e;
    e.constant = constant;
    e.terms = terms;
    return e;
  };
  m.def("iota", [affine](py::handle dst, int64_t constant, std::vector<std::pair<int, int64_t>> terms) {
    ExecContext& ctx = exec_or_raise("iota");
    check(isa_iota(ctx, to_access(dst, "dst"), affine(constant, terms), caller_loc()));
  });
  m.def("affine_select", [affine](py::handle dst, int64_t constant, std::vector<std::pair<int, int64_t>> terms,
                                  const std::string& cmp, py::handle on_true, double on_false) {
    ExecContext& ctx = exec_or_raise("affine_select");
    check(isa_affine_select(ctx, to_access(dst, "dst"), affine(constant, terms), parse_binary(cmp),
                            to_access(on_true, "on_true_tile"), on_false, caller_loc()));
  });
  // scale: a number, or a [P, 1] tile.
  m.def(
      "activation",
      [](py::handle dst, const std::string& op, py::handle src, py::handle bias, py::handle scale,
         py::handle reduce_res, const std::string& reduce_op) {
        ExecContext& ctx = exec_or_raise("activation");
        std::optional<Access> b, scale_tile;
        if (!bias.is_none()) b = to_access(bias, "bias");
        double s = 1.0;
        if (py::isinstance<py::float_>(scale) || py::isinstance<py::int_>(scale))
          s = scale.cast<double>();
        else
          scale_tile = to_access(scale, "scale");
        std::optional<UnaryOp> fn;
        if (op != "copy" && op != "identity") fn = parse_unary(op);
        std::optional<ActivationReduce> reduce_to;
        if (!reduce_res.is_none()) {
          ReduceOp rop = ReduceOp::kSum;
          if (reduce_op == "maximum" || reduce_op == "max")
            rop = ReduceOp::kMax;
          else if (reduce_op == "minimum" || reduce_op == "min")
            rop = ReduceOp::kMin;
          else if (reduce_op != "add" && reduce_op != "sum")
            raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not an activation reduction", reduce_op),
                            "reduce with nl.add (or nl.maximum / nl.minimum)"));
          reduce_to = ActivationReduce{to_access(reduce_res, "reduce_res"), rop};
        }
        check(isa_activation(ctx, to_access(dst, "dst"), fn, to_access(src, "data"), b, s, caller_loc(), scale_tile,
                             reduce_to));
      },
      py::arg("dst"), py::arg("op"), py::arg("src"), py::arg("bias"), py::arg("scale"),
      py::arg("reduce_res") = py::none(), py::arg("reduce_op") = "add");
  // perf_mode: "" (the ordinary mode) or "double_row" (nki/isa_matmul_modes.h).
  m.def(
      "nc_matmul",
      [](py::handle dst, py::handle stationary, py::handle moving, const std::string& mode,
         const std::string& perf_mode) {
        ExecContext& ctx = exec_or_raise("nc_matmul");
        Accumulate acc = mode == "accumulate"  ? Accumulate::kAccumulate
                         : mode == "overwrite" ? Accumulate::kOverwrite
                                               : Accumulate::kAuto;
        const MatmulPerfMode pm = parse_perf_mode(perf_mode);
        Access d = to_access(dst, "dst"), s = to_access(stationary, "stationary"), mv = to_access(moving, "moving");
        if (pm == MatmulPerfMode::kDoubleRow)
          check(isa_nc_matmul_double_row(ctx, d, s, mv, acc, caller_loc()));
        else
          check(isa_nc_matmul(ctx, d, s, mv, acc, caller_loc()));
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"), py::arg("mode"), py::arg("perf_mode") = "");
  // Checks the operands, then allocates the float32 PSUM result and multiplies into it: so that a bad
  // operand reports its own rule, not a consequence of the result's shape.
  m.def(
      "nc_matmul_new",
      [](py::handle stationary, py::handle moving, const std::string& perf_mode) {
        ExecContext& ctx = exec_or_raise("nc_matmul");
        const MatmulPerfMode pm = parse_perf_mode(perf_mode);
        Access s = to_access(stationary, "stationary"), mv = to_access(moving, "moving");
        check(pm == MatmulPerfMode::kDoubleRow ? check_matmul_double_row_inputs(ctx, s, mv)
                                               : check_matmul_inputs(ctx, s, mv));
        const int64_t free_axis = pm == MatmulPerfMode::kDoubleRow ? 2 : 1;
        auto dst = make_nki_tensor({s.shape()[free_axis], mv.shape()[free_axis]}, DType::kFloat32, Buffer::kPsum, "",
                                   fresh_poison(ctx, Buffer::kPsum));
        dst->scope = t_launch->current_scope();
        dst->created_tag = ctx.affine_tag;
        track_psum(*dst, dst->data.shape()[0]);
        check(t_launch->alloc.on_create(ctx, dst, TensorOrigin::kResult, nullptr, true, caller_loc()));
        touch(whole(dst));
        if (pm == MatmulPerfMode::kDoubleRow)
          check(isa_nc_matmul_double_row(ctx, whole(dst), s, mv, Accumulate::kOverwrite, caller_loc()));
        else
          check(isa_nc_matmul(ctx, whole(dst), s, mv, Accumulate::kOverwrite, caller_loc()));
        return dst;
      },
      py::arg("stationary"), py::arg("moving"), py::arg("perf_mode") = "");
  // The operand rules of a matmul, at its call (a legacy matmul lands later, where it is used).
  m.def(
      "check_matmul_inputs",
      [](py::handle stationary, py::handle moving, const std::string& perf_mode) {
        ExecContext& ctx = exec_or_raise("nc_matmul");
        Access s = to_access(stationary, "stationary"), mv = to_access(moving, "moving");
        check(parse_perf_mode(perf_mode) == MatmulPerfMode::kDoubleRow ? check_matmul_double_row_inputs(ctx, s, mv)
                                                                       : check_matmul_inputs(ctx, s, mv));
      },
      py::arg("stationary"), py::arg("moving"), py::arg("perf_mode") = "");
  // (file, line) of the innermost frame in the kernel's own files, or None.
  m.def("caller_location", []() -> py::object {
    const SourceLoc loc = caller_loc();
    if (loc.file.empty()) return py::none();
    return py::make_tuple(loc.file, loc.line);
  });
  m.def("check_transpose", [](py::handle src, const std::string& engine) {
    check(check_transpose_input(to_access(src, "data"), parse_engine(engine)));
  });
  m.def("nc_transpose", [](py::handle dst, py::handle src, const std::string& engine) {
    ExecContext& ctx = exec_or_raise("nc_transpose");
    check(isa_nc_transpose(ctx, to_access(dst, "dst"), to_access(src, "data"), parse_engine(engine), caller_loc()));
  });
  m.def("tensor_reduce", [](py::handle dst, const std::string& op, py::handle src, std::vector<int> axes, bool negate) {
    ExecContext& ctx = exec_or_raise("tensor_reduce");
    static const std::pair<const char*, ReduceOp> kOps[] = {
        {"add", ReduceOp::kSum},     {"multiply", ReduceOp::kProd},   {"maximum", ReduceOp::kMax},
        {"minimum", ReduceOp::kMin}, {"logical_and", ReduceOp::kAll}, {"logical_or", ReduceOp::kAny},
        {"sum", ReduceOp::kSum},     {"max", ReduceOp::kMax},         {"min", ReduceOp::kMin},
        {"prod", ReduceOp::kProd}};
    for (const auto& [name, rop] : kOps)
      if (op == name) {
        check(isa_tensor_reduce(ctx, to_access(dst, "dst"), rop, to_access(src, "data"), axes, negate, caller_loc()));
        return;
      }
    raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not a reduction operator", op),
                    "reduce with nl.add, nl.maximum, nl.minimum, nl.multiply, nl.logical_and or nl.logical_or"));
  });
  m.def("tensor_tensor_scan", [](py::handle dst, py::handle d0, py::handle d1, py::handle initial,
                                 const std::string& op0, const std::string& op1, bool rev0, bool rev1) {
    ExecContext& ctx = exec_or_raise("tensor_tensor_scan");
    std::optional<Access> init_tile;
    double init = 0;
    if (py::isinstance<py::float_>(initial) || py::isinstance<py::int_>(initial))
      init = initial.cast<double>();
    else
      init_tile = to_access(initial, "initial");
    check(isa_tensor_tensor_scan(ctx, to_access(dst, "dst"), to_access(d0, "data0"), to_access(d1, "data1"), init,
                                 init_tile, parse_binary(op0), parse_binary(op1), rev0, rev1, caller_loc()));
  });
  m.def("bn_stats", [](py::handle dst, py::handle src) {
    ExecContext& ctx = exec_or_raise("bn_stats");
    check(isa_bn_stats(ctx, to_access(dst, "dst"), to_access(src, "data"), caller_loc()));
  });
  m.def("bn_aggr", [](py::handle dst, py::handle src) {
    ExecContext& ctx = exec_or_raise("bn_aggr");
    check(isa_bn_aggr(ctx, to_access(dst, "dst"), to_access(src, "data"), caller_loc()));
  });
  // A returned output with elements that hold no data (nki/written.h): nkia_uninitialized_read where
  // garbage first entered its values, when an instruction combined unwritten elements with written
  // ones on the way; else nkia_output_partially_written at the kernel's return.
  m.def("warn_unwritten_output", [](const std::shared_ptr<NkiTensor>& t, const std::string& file, int line) {
    RunScope* run = current_run();
    const auto pos = first_unwritten(whole(t));
    if (!run || !pos) return;
    const std::string name = fmt::format("'{}' {}", t->name.empty() ? "tensor" : t->name, shape_str(t->data.shape()));
    Diagnostic d;
    if (t->stale_origin.known()) {
      d = make_error("nkia_uninitialized_read",
                     fmt::format("{}, and what it computed reached the returned output {} (the first element "
                                 "affected: [{}]); on hardware those results would come from stale memory",
                                 t->stale_what, name, fmt::join(*pos, ", ")));
      d.at(t->stale_origin);
    } else {
      d = make_error("nkia_output_partially_written",
                     fmt::format("the returned output {} has elements that nothing wrote, or that were computed "
                                 "only from unwritten memory (the first: [{}]); on hardware they keep whatever the "
                                 "buffer held",
                                 name, fmt::join(*pos, ", ")));
      d.at(SourceLoc{file, line, 0});
    }
    d.severity = Severity::kWarning;
    run->warnings.add(std::move(d));
  });
  m.def("constant", [](py::handle arr, const std::string& dtype) {
    exec_or_raise("shared_constant");
    auto t = numpy_to_tensor(arr, dtype, "constant");
    if (!t) raise(t.error());
    auto h = std::make_shared<NkiTensor>();
    h->data = std::move(*t);
    h->name = "constant";
    h->buffer = Buffer::kSharedHbm;
    h->written = true;
    return h;
  });
  auto opt_access = [](py::handle h, const char* role) -> std::optional<Access> {
    if (h.is_none()) return std::nullopt;
    return to_access(h, role);
  };
  // steps: [(operator name, operand: a number, a [P, 1] tile or None, reverse), ...]
  m.def("tensor_scalar_ops", [](py::handle dst, py::handle src, py::list steps) {
    ExecContext& ctx = exec_or_raise("tensor_scalar");
    std::vector<ScalarStep> parsed;
    for (py::handle h : steps) {
      auto t = h.cast<py::tuple>();
      ScalarStep st;
      const std::string name = t[0].cast<std::string>();
      bool binary_name = false;
      for (int i = 0; i <= static_cast<int>(BinaryOp::kRightShift); ++i)
        binary_name |= binary_op_name(static_cast<BinaryOp>(i)) == name;
      if (binary_name)
        st.op = parse_binary(name);
      else
        st.unary = parse_unary(name);
      py::handle operand = t[1];
      if (py::isinstance<py::float_>(operand) || py::isinstance<py::int_>(operand))
        st.value = operand.cast<double>();
      else if (!operand.is_none())
        st.tile = to_access(operand, "operand");
      else if (!st.unary)
        raise(nki_error("nkia_bad_operand", fmt::format("tensor_scalar operator '{}' needs an operand", name),
                        "pass operand0 (and operand1 with op1): a number or a [P, 1] tile"));
      st.reverse = t[2].cast<bool>();
      parsed.push_back(std::move(st));
    }
    check(isa_tensor_scalar_ops(ctx, to_access(dst, "dst"), to_access(src, "data"), parsed, caller_loc()));
  });
  m.def("max8", [](py::handle dst, py::handle src) {
    ExecContext& ctx = exec_or_raise("max8");
    check(isa_max8(ctx, to_access(dst, "dst"), to_access(src, "src"), caller_loc()));
  });
  m.def("find_index8", [](py::handle dst, py::handle data, py::handle vals) {
    ExecContext& ctx = exec_or_raise("nc_find_index8");
    check(isa_find_index8(ctx, to_access(dst, "dst"), to_access(data, "data"), to_access(vals, "vals"), caller_loc()));
  });
  m.def("match_replace8", [opt_access](py::handle dst, py::handle data, py::handle vals, double imm, py::handle idx) {
    ExecContext& ctx = exec_or_raise("nc_match_replace8");
    check(isa_match_replace8(ctx, to_access(dst, "dst"), to_access(data, "data"), to_access(vals, "vals"), imm,
                             opt_access(idx, "dst_idx"), caller_loc()));
  });
  m.def("stream_shuffle", [](py::handle dst, py::handle src, std::vector<int64_t> mask) {
    ExecContext& ctx = exec_or_raise("nc_stream_shuffle");
    check(isa_stream_shuffle(ctx, to_access(dst, "dst"), to_access(src, "src"), mask, caller_loc()));
  });
  m.def("range_select",
        [opt_access](py::handle dst, py::handle on_true, const std::string& cmp0, const std::string& cmp1,
                     py::handle bound0, py::handle bound1, double start, double on_false, py::handle reduce_res) {
          ExecContext& ctx = exec_or_raise("range_select");
          check(isa_range_select(ctx, to_access(dst, "dst"), to_access(on_true, "on_true_tile"), parse_binary(cmp0),
                                 parse_binary(cmp1), to_access(bound0, "bound0"), to_access(bound1, "bound1"), start,
                                 on_false, opt_access(reduce_res, "reduce_res"), caller_loc()));
        });
  m.def("select_reduce", [opt_access](py::handle dst, py::handle pred, py::handle on_true, py::handle on_false,
                                      bool reverse, py::handle reduce_res) {
    ExecContext& ctx = exec_or_raise("select_reduce");
    std::optional<Access> f_tile;
    double f = 0;
    if (py::isinstance<py::float_>(on_false) || py::isinstance<py::int_>(on_false))
      f = on_false.cast<double>();
    else
      f_tile = to_access(on_false, "on_false");
    check(isa_select_reduce(ctx, to_access(dst, "dst"), to_access(pred, "predicate"), to_access(on_true, "on_true"), f,
                            f_tile, reverse, opt_access(reduce_res, "reduce_res"), caller_loc()));
  });
  m.def("copy_predicated", [](py::handle dst, py::handle src, py::handle pred, bool reverse) {
    ExecContext& ctx = exec_or_raise("tensor_copy_predicated");
    std::optional<Access> s;
    double v = 0;
    if (py::isinstance<py::float_>(src) || py::isinstance<py::int_>(src))
      v = src.cast<double>();
    else
      s = to_access(src, "src");
    check(isa_copy_predicated(ctx, to_access(dst, "dst"), s, v, to_access(pred, "predicate"), reverse, caller_loc()));
  });
  m.def("gather_flattened", [](py::handle dst, py::handle data, py::handle indices) {
    ExecContext& ctx = exec_or_raise("gather_flattened");
    check(isa_gather_flattened(ctx, to_access(dst, "dst"), to_access(data, "data"), to_access(indices, "indices"),
                               caller_loc()));
  });
  m.def("local_gather", [](py::handle dst, py::handle src, py::handle index, int64_t num_elem_per_idx,
                           std::optional<int64_t> num_valid_indices) {
    ExecContext& ctx = exec_or_raise("local_gather");
    check(isa_local_gather(ctx, to_access(dst, "dst"), to_access(src, "src_buffer"), to_access(index, "index"),
                           num_elem_per_idx, num_valid_indices, caller_loc()));
  });
  m.def("dma_transpose_gather", [](py::handle dst, py::handle rows, py::handle index, bool skip_oob) {
    ExecContext& ctx = exec_or_raise("dma_transpose");
    check(isa_dma_transpose_gather(ctx, to_access(dst, "dst"), to_access(rows, "src"), to_access(index, "index"),
                                   skip_oob, caller_loc()));
  });
  m.def("dma_indirect", [](py::handle tile, py::handle rows, py::handle index, bool gather, bool skip_oob) {
    ExecContext& ctx = exec_or_raise("dma_copy");
    check(isa_dma_indirect(ctx, to_access(tile, gather ? "dst" : "src"), to_access(rows, gather ? "src" : "dst"),
                           to_access(index, "index"), gather, skip_oob, caller_loc()));
  });
  m.def("partition_reduce", [](py::handle dst, const std::string& op, py::handle data) {
    ExecContext& ctx = exec_or_raise("tensor_partition_reduce");
    check(isa_partition_reduce(ctx, to_access(dst, "dst"), parse_binary(op), to_access(data, "data"), caller_loc()));
  });
  m.def("memset", [](py::handle dst, double value, const std::string& engine) {
    ExecContext& ctx = exec_or_raise("memset");
    check(isa_memset(ctx, to_access(dst, "dst"), value, parse_engine(engine), caller_loc()));
  });
  m.def("tensor_copy", [](py::handle dst, py::handle src, const std::string& engine) {
    ExecContext& ctx = exec_or_raise("tensor_copy");
    check(isa_tensor_copy(ctx, to_access(dst, "dst"), to_access(src, "src"), parse_engine(engine), caller_loc()));
  });
  // `t[...] = value`: the copy on the Vector engine, value being the source the compiler folds
  // into the instruction that produced it (no compiler-allocated tile in direct allocation).
  m.def("assign", [](py::handle dst, py::handle value) {
    ExecContext& ctx = exec_or_raise("tensor_copy");
    Access d = to_access(dst, "dst"), v = to_access(value, "value");
    check(isa_tensor_copy(ctx, d, v, Engine::kVector, caller_loc()));
  });

  // ---- Vector-engine fused instructions (nki/isa_vector.h) ------------------------------------
  m.def("reciprocal", [](py::handle dst, py::handle data) {
    ExecContext& ctx = exec_or_raise("reciprocal");
    check(isa_reciprocal(ctx, to_access(dst, "dst"), to_access(data, "data"), caller_loc()));
  });
  // operand0: a number or a [P, 1] tile; op0 and op1 binary operators (nl.add, nl.multiply, ...).
  m.def("scalar_tensor_tensor", [](py::handle dst, py::handle data, const std::string& op0, py::handle operand0,
                                   bool reverse0, const std::string& op1, py::handle data1, bool reverse1) {
    ExecContext& ctx = exec_or_raise("scalar_tensor_tensor");
    ScalarOperand o0;
    if (py::isinstance<py::float_>(operand0) || py::isinstance<py::int_>(operand0))
      o0.value = operand0.cast<double>();
    else
      o0.tile = to_access(operand0, "operand0");
    check(isa_scalar_tensor_tensor(ctx, to_access(dst, "dst"), to_access(data, "data"), parse_binary(op0), o0, reverse0,
                                   parse_binary(op1), to_access(data1, "operand1"), reverse1, caller_loc()));
  });
}
