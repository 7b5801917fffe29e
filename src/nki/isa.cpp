// nki/isa.cpp — the instructions of nki/isa.h on the DMA queues and the Vector, Scalar and GpSimd
// engines, each in one pass: its checks, its trace record, then (unless timing-only) its numbers.
// The Tensor engine's instructions are isa_matmul.cpp.
#include "nki/isa.h"

#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "nki/checks.h"
#include "nki/isa_scalar.h"
#include "nki/numeric_checks.h"
#include "nki/written.h"

namespace nki_agent {

bool same_squeezed(const Shape& a, const Shape& b) {
  Shape x, y;
  for (int64_t d : a)
    if (d != 1) x.push_back(d);
  for (int64_t d : b)
    if (d != 1) y.push_back(d);
  return x == y;
}

Tensor as_shape_of(const Tensor& src, const Shape& shape) {
  return src.shape() == shape ? src : src.reshape(shape);
}

void compute_into(const Tensor& dst, const Shape& shape, const std::function<void(Tensor&)>& fill) {
  Tensor out = dst;
  if (dst.shape() == shape || same_squeezed(dst.shape(), shape)) {
    out = as_shape_of(dst, shape);
    fill(out);
    return;
  }
  Tensor tmp = Tensor::uninitialized(shape, dst.dtype());
  fill(tmp);
  out.assign(tmp.reshape(dst.shape()));  // tmp is contiguous: the reshape is a view
}

Result<void> check_dst_elements(const Access& dst, const Access& src, const char* instruction) {
  if (dst.view.numel() == src.view.numel()) return {};
  return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                        fmt::format("'{}' of {} into {}: they hold different numbers of elements per partition",
                                    instruction, src.describe(), dst.describe()),
                        "write the result into a tile of the operand's size"));
}

namespace {

// Records that the running affine_range iteration writes dst's elements of an HBM tensor, and
// refuses the write when another iteration of the same loop already wrote one of them: the
// iterations may run in any order, so the result would be undefined.
Result<void> tag_affine_write(const ExecContext& ctx, const Access& dst, const char* op) {
  NkiTensor& t = *dst.tensor;
  if (const int64_t tag = t.iterations.write_tags.other_iterations(dst.view, t.data, ctx.affine_tag, nullptr))
    return fail(nki_error("err_unexpected_output_dependencies",
                          fmt::format("'{}' into {}: iterations {} and {} of one nl.affine_range loop write the "
                                      "same element",
                                      op, dst.describe(), tag & 0xffffffff, ctx.affine_tag & 0xffffffff),
                          "index the write with the loop variable so each iteration has its own slot, or use "
                          "nl.sequential_range when the iterations must run in order"));
  t.iterations.write_tags.set(dst.view, t.data, ctx.affine_tag);
  return {};
}

}  // namespace

Result<void> isa_dma_copy(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc,
                          std::optional<BinaryOp> rmw) {
  constexpr const char* kOp = opcode_name(Opcode::kDmaCopy);
  if (rmw && *rmw != BinaryOp::kAdd)
    return fail(
        nki_error("nkia_unsupported_operator",
                  fmt::format("'{}' accumulates with dst_rmw_op=nl.add only, not {}", kOp, binary_op_name(*rmw)),
                  "pass dst_rmw_op=nl.add, or load both operands and combine them on an engine"));
  if (src.buffer() == Buffer::kPsum && buffer_is_hbm(dst.buffer()))
    return fail(nki_error("err_unsupported_memory",
                          fmt::format("'{}' cannot move {} from PSUM to HBM", kOp, src.describe()),
                          "copy the PSUM tile to an SBUF tile first (nl.copy or nisa.tensor_copy), then store that"));
  for (const Access* a : {&dst, &src})
    if (auto r = check_partition_limit(ctx, *a, kOp); !r) return r;
  // DMA moves elements in order: the two sides need the same number of elements, not one shape
  // (an HBM row can land in a [P, 1] column, a [128, 64] tile in a [128, 4, 16] one).
  if (dst.view.numel() != src.view.numel())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' copies {} ({} elements) into {} ({} elements)", kOp, src.describe(),
                                      src.view.numel(), dst.describe(), dst.view.numel()),
                          "index the source and the destination so that both select the same number of elements"));
  if (buffer_is_hbm(dst.buffer()) && ctx.affine_tag != 0 && !rmw)
    if (auto r = tag_affine_write(ctx, dst, kOp); !r) return r;
  const Tensor from = src.view.shape() == dst.shape() ? src.view : src.view.reshape(dst.shape());
  Tensor dview = dst.view;
  if (rmw) {
    ctx.trace.add(
        issue_instruction(ctx, Engine::kDma, {Opcode::kDmaCopy, *rmw}, loc, dst, {&src, &dst}, DataFlow::kElementwise));
    if (ctx.compute) dview.assign(binary(BinaryOp::kAdd, dst.view.astype(DType::kFloat32), from, dst.dtype()));
    return {};
  }
  ctx.trace.add(issue_instruction(ctx, Engine::kDma, Opcode::kDmaCopy, loc, dst, {&src}, DataFlow::kElementwise));
  if (ctx.compute && (ctx.eager_state || !defer_copy(dst, src, from))) dview.assign(from);
  return {};
}

Result<void> check_dma_transpose_elements(const Access& src, const char* op) {
  if (src.view.itemsize() != 2 && src.view.itemsize() != 4)
    return fail(nki_error("nkia_dma_transpose_layout",
                          fmt::format("'{}' moves 2- or 4-byte elements, not {}", op, src.describe()),
                          "transpose bfloat16/float16 or float32/int32 data; convert other types first"));
  return {};
}

std::span<const int> dma_transpose_axes(int rank) {
  static constexpr int k2[] = {1, 0}, k3[] = {2, 1, 0}, k4[] = {3, 1, 2, 0};
  switch (rank) {
    case 2: return k2;
    case 3: return k3;
    case 4: return k4;
    default: return {};
  }
}

Result<void> isa_dma_transpose(ExecContext& ctx, const Access& dst, const Access& src, std::vector<int> axes,
                               const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kDmaTranspose);
  const int rank = src.view.ndim();
  const std::span<const int> default_axes = dma_transpose_axes(rank);
  if (default_axes.empty())
    return fail(nki_error("nkia_dma_transpose_layout",
                          fmt::format("'{}' permutes 2-D to 4-D sources, not {}", kOp, src.describe()),
                          "index the source down to 2, 3 or 4 dimensions"));
  const std::vector<int> perm(default_axes.begin(), default_axes.end());
  if (axes.empty()) axes = perm;
  if (axes != perm)
    return fail(nki_error("nkia_dma_transpose_layout",
                          fmt::format("'{}' of the {}-D {} with axes ({}): the DMA engines permute a {}-D source only "
                                      "as ({})",
                                      kOp, rank, src.describe(), fmt::join(axes, ", "), rank, fmt::join(perm, ", ")),
                          fmt::format("pass axes=({}) or none; for another layout transpose on chip with "
                                      "nisa.nc_transpose",
                                      fmt::join(perm, ", "))));
  if (auto r = check_dma_transpose_elements(src, kOp); !r) return r;
  if (src.buffer() == Buffer::kPsum || dst.buffer() != Buffer::kSbuf)
    return fail(nki_error("err_unsupported_memory",
                          fmt::format("'{}' reads HBM or SBUF and writes SBUF, not {} -> {}", kOp,
                                      buffer_name(src.buffer()), buffer_name(dst.buffer())),
                          "transpose an HBM or SBUF source into an nl.sbuf tile"));
  if (auto r = check_partition_limit(ctx, dst, kOp); !r) return r;
  const Tensor moved = src.view.transpose(axes);
  if (dst.shape() != moved.shape() || dst.dtype() != src.dtype())
    return fail(nki_error("nkia_dma_transpose_layout",
                          fmt::format("'{}' of {} gives {} {}, but the destination is {}", kOp, src.describe(),
                                      dtype_name(src.dtype()), shape_str(moved.shape()), dst.describe()),
                          "allocate the destination with the permuted shape and the source's dtype"));
  Tensor flags = written_flags(src);
  ctx.trace.add(issue_instruction(ctx, Engine::kDma, Opcode::kDmaTranspose, loc, dst, {&src}, DataFlow::kCustom));
  set_written(dst, flags.defined() ? flags.transpose(axes).copy() : Tensor());
  if (flags.defined()) inherit_stale(dst, std::array{&src});
  if (ctx.compute) {
    Tensor out = dst.view;
    out.assign(moved);
  }
  return {};
}

Result<void> isa_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& a, const Access& b, BinaryOp op,
                               const SourceLoc& loc) {
  const InstrOp opcode(Opcode::kTensorTensor, op);
  if (auto r = check_tiles(ctx, {&dst, &a, &b}, opcode_name(Opcode::kTensorTensor)); !r) return r;
  if (auto r = check_same_partitions(a, b, "tensor_tensor"); !r) return r;
  if (auto r = check_same_partitions(dst, a, "tensor_tensor"); !r) return r;
  if (a.buffer() == Buffer::kPsum && b.buffer() == Buffer::kPsum)
    return fail(nki_error("nkia_both_inputs_in_psum",
                          fmt::format("'tensor_tensor' reads both {} and {} from PSUM; the Vector engine reads at most "
                                      "one operand from PSUM",
                                      a.describe(), b.describe()),
                          "copy one operand to SBUF first (nl.copy or nisa.tensor_copy)"));
  // The ISA pairs the elements of each partition one to one, in order: the two tiles need the same
  // partitions and the same number of elements per partition, not the same free shape ([128, 80]
  // with [128, 4, 20] is legal, as the ISA reference states); no broadcasting (the nl functions
  // broadcast before they get here).
  if (a.view.numel() != b.view.numel())
    return fail(nki_error("nkia_free_size_mismatch",
                          fmt::format("'tensor_tensor' pairs the elements of {} and {}, but they hold different "
                                      "numbers of elements per partition",
                                      a.describe(), b.describe()),
                          "slice both operands to one size; for a [P, 1] operand use nisa.tensor_scalar"));
  if (dst.view.numel() != a.view.numel())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'tensor_tensor' of {} and {} into {}: the destination holds another number of "
                                      "elements per partition",
                                      a.describe(), b.describe(), dst.describe()),
                          "write the result into a tile of the operands' size"));
  if (is_bitvec_op(op) && (dtype_is_float(a.dtype()) || dtype_is_float(b.dtype()) || dtype_is_float(dst.dtype())))
    return fail(nki_error("nkia_bitvec_op_needs_integer",
                          fmt::format("'tensor_tensor' {} works on the bits of integer tiles, not {} and {}",
                                      binary_op_name(op), a.describe(), b.describe()),
                          "use integer tiles (nl.int32, nl.uint8, ...) for bitwise and shift operators"));
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, opcode, loc, dst, {&a, &b}, DataFlow::kElementwise));
  if (!ctx.compute) return {};
  const Tensor rhs = b.shape() == a.shape() ? b.view : b.view.reshape(a.shape());  // a copy when no view fits
  compute_into(dst.view, a.shape(), [&](Tensor& out) {
    if (op == BinaryOp::kRightShift)
      out.assign(logical_right_shift(a.view, rhs));
    else
      binary_into(op, a.view, rhs, out);
  });
  return {};
}

namespace {

// Bitvec operators (and/or/xor/shifts) work on the bits of integer tiles.
Result<void> check_bitvec_operands(BinaryOp op, const Access& src, const Access& dst) {
  if (!is_bitvec_op(op) || (!dtype_is_float(src.dtype()) && !dtype_is_float(dst.dtype()))) return {};
  return fail(nki_error("nkia_bitvec_op_needs_integer",
                        fmt::format("'tensor_scalar' {} works on the bits of integer tiles, not {} into {}",
                                    binary_op_name(op), src.describe(), dst.describe()),
                        "use integer tiles (nl.int32, nl.uint8, ...) for bitwise and shift operators; for sign or "
                        "magnitude of floats use the arithmetic functions (nl.abs, nl.negative, nl.sign)"));
}

}  // namespace

Result<void> isa_tensor_scalar(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op, double scalar,
                               bool reverse, const SourceLoc& loc) {
  if (auto r = check_tiles(ctx, {&dst, &src}, "tensor_scalar"); !r) return r;
  if (auto r = check_same_partitions(dst, src, "tensor_scalar"); !r) return r;
  if (auto r = check_dst_elements(dst, src, "tensor_scalar"); !r) return r;
  if (auto r = check_bitvec_operands(op, src, dst); !r) return r;
  ctx.trace.add(
      issue_instruction(ctx, Engine::kVector, {Opcode::kTensorScalar, op}, loc, dst, {&src}, DataFlow::kElementwise));
  if (!ctx.compute) return {};
  const Tensor s = Tensor::full({}, DType::kFloat32, scalar);
  compute_into(dst.view, src.shape(), [&](Tensor& out) {
    if (reverse)
      binary_into(op, s, src.view, out);
    else
      binary_into(op, src.view, s, out);
  });
  return {};
}

Result<void> isa_tensor_scalar_tile(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op,
                                    const Access& operand, bool reverse, const SourceLoc& loc) {
  if (auto r = check_tiles(ctx, {&dst, &src, &operand}, "tensor_scalar"); !r) return r;
  if (auto r = check_same_partitions(dst, src, "tensor_scalar"); !r) return r;
  if (operand.view.numel() != operand.partitions() || operand.partitions() != src.partitions())
    return fail(
        nki_error("nkia_scalar_operand_shape",
                  fmt::format("'tensor_scalar' operand {} is not one value per partition of {}", operand.describe(),
                              src.describe()),
                  fmt::format("pass a [{}, 1] tile (one value per partition) or a Python number", src.partitions())));
  if (auto r = check_dst_elements(dst, src, "tensor_scalar"); !r) return r;
  if (auto r = check_bitvec_operands(op, src, dst); !r) return r;
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, {Opcode::kTensorScalar, op}, loc, dst, {&src, &operand},
                                  DataFlow::kElementwise));
  if (!ctx.compute) return {};
  Shape per_partition(static_cast<size_t>(std::max(src.view.ndim(), 1)), 1);
  per_partition[0] = src.partitions();
  const Tensor column = operand.view.reshape(per_partition);
  compute_into(dst.view, src.shape(), [&](Tensor& out) {
    if (reverse)
      binary_into(op, column, src.view, out);
    else
      binary_into(op, src.view, column, out);
  });
  return {};
}

int64_t AffineExpr::at(std::span<const int64_t> pos) const {
  int64_t v = constant;
  for (const auto& [axis, coef] : terms) v += coef * pos[static_cast<size_t>(axis)];
  return v;
}

namespace {

Result<void> check_affine(const Access& dst, const AffineExpr& expr, const char* op) {
  if (auto r = check_on_chip(dst, op); !r) return r;
  if (auto r = check_engine_memory(dst, Engine::kGpSimd, op); !r) return r;
  for (const auto& [axis, coef] : expr.terms)
    if (axis < 0 || axis >= dst.view.ndim())
      return fail(nki_error("nkia_bad_index",
                            fmt::format("'{}' expression uses axis {} of a {}-D tile", op, axis, dst.view.ndim()),
                            "build the expression from index tiles of the destination's shape"));
  return {};
}

// Calls fn(i, pos) for every row of `shape` (its last axis) in C order: i is the flat index of the
// row's first element, pos its position (last axis 0). A 0-d shape is one row of one element.
template <typename Fn>
void for_each_row(const Shape& shape, Fn&& fn) {
  const int64_t n = shape_numel(shape);
  const int64_t len = shape.empty() ? 1 : shape.back();
  if (n == 0) return;
  std::vector<int64_t> pos(shape.size(), 0);
  for (int64_t i = 0; i < n; i += len) {
    fn(i, std::span<const int64_t>(pos));
    for (size_t ax = shape.empty() ? 0 : shape.size() - 1; ax-- > 0;) {  // the axes before the last
      if (++pos[ax] < shape[ax]) break;
      pos[ax] = 0;
    }
  }
}

// What the expression adds per step along the last axis of `shape`.
int64_t last_axis_step(const Shape& shape, const AffineExpr& expr) {
  int64_t step = 0;
  for (const auto& [axis, coef] : expr.terms)
    if (!shape.empty() && axis == static_cast<int>(shape.size()) - 1) step += coef;
  return step;
}

bool compare(BinaryOp cmp, int64_t v) {
  switch (cmp) {
    case BinaryOp::kEqual: return v == 0;
    case BinaryOp::kNotEqual: return v != 0;
    case BinaryOp::kLess: return v < 0;
    case BinaryOp::kLessEqual: return v <= 0;
    case BinaryOp::kGreater: return v > 0;
    case BinaryOp::kGreaterEqual: return v >= 0;
    default: return false;
  }
}

// The positions of a row where cmp(v + step * j, 0) fails, j in [0, len): at most two runs
// [begin, end). The value is linear in j, so an inequality changes its answer at most once along the
// row (found by bisection), and an equality holds at most at one position.
struct FailingRuns {
  std::array<std::pair<int64_t, int64_t>, 2> runs{};
  int count = 0;
  void add(int64_t begin, int64_t end) {
    if (begin < end) runs[static_cast<size_t>(count++)] = {begin, end};
  }
};

FailingRuns failing_runs(int64_t v, int64_t step, int64_t len, BinaryOp cmp) {
  FailingRuns out;
  auto holds = [&](int64_t j) { return compare(cmp, v + step * j); };
  if (len <= 0) return out;
  if (step == 0) {
    if (!holds(0)) out.add(0, len);
    return out;
  }
  if (cmp == BinaryOp::kEqual || cmp == BinaryOp::kNotEqual) {
    const bool hit = v % step == 0 && -v / step >= 0 && -v / step < len;  // the j where the value is 0
    const int64_t j = hit ? -v / step : -1;
    if (cmp == BinaryOp::kNotEqual) {
      if (hit) out.add(j, j + 1);
    } else if (hit) {
      out.add(0, j);
      out.add(j + 1, len);
    } else {
      out.add(0, len);
    }
    return out;
  }
  const bool first = holds(0);
  if (first == holds(len - 1)) {  // monotone: the same answer all along the row
    if (!first) out.add(0, len);
    return out;
  }
  int64_t lo = 0, hi = len - 1;  // holds(lo) == first, holds(hi) != first
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (holds(mid) == first ? lo : hi) = mid;
  }
  if (first)
    out.add(hi, len);
  else
    out.add(0, hi);
  return out;
}

// Calls fn(i, pos, begin, end) for each run of positions [i + begin, i + end) (flat, C order) of a
// row of `shape` where cmp(expr(position), 0) fails; i and pos are the row's first element.
template <typename Fn>
void for_each_failing_run(const Shape& shape, const AffineExpr& expr, BinaryOp cmp, Fn&& fn) {
  const int64_t len = shape.empty() ? 1 : shape.back();
  const int64_t step = last_axis_step(shape, expr);
  for_each_row(shape, [&](int64_t i, std::span<const int64_t> pos) {
    const FailingRuns r = failing_runs(expr.at(pos), step, len, cmp);
    for (int k = 0; k < r.count; ++k)
      fn(i, pos, r.runs[static_cast<size_t>(k)].first, r.runs[static_cast<size_t>(k)].second);
  });
}

}  // namespace

Result<void> isa_iota(ExecContext& ctx, const Access& dst, const AffineExpr& expr, const SourceLoc& loc) {
  if (auto r = check_affine(dst, expr, "iota"); !r) return r;
  if (auto r = check_partition_limit(ctx, dst, "iota"); !r) return r;
  ctx.trace.add(issue_instruction(ctx, Engine::kGpSimd, Opcode::kIota, loc, dst, {}));
  if (!ctx.compute) return {};
  std::vector<int64_t> values(static_cast<size_t>(dst.view.numel()));
  const int64_t len = dst.shape().empty() ? 1 : dst.shape().back();
  const int64_t step = last_axis_step(dst.shape(), expr);
  for_each_row(dst.shape(), [&](int64_t i, std::span<const int64_t> pos) {
    const int64_t v = expr.at(pos);
    for (int64_t j = 0; j < len; ++j) values[static_cast<size_t>(i + j)] = v + step * j;
  });
  Tensor out = dst.view;
  out.assign(Tensor::from_i64(dst.shape(), values, DType::kInt32));  // the engine computes in int32
  return {};
}

Result<void> isa_affine_select(ExecContext& ctx, const Access& dst, const AffineExpr& expr, BinaryOp cmp,
                               const Access& on_true, double on_false_value, const SourceLoc& loc) {
  if (cmp < BinaryOp::kEqual || cmp > BinaryOp::kGreaterEqual)
    return fail(nki_error("nkia_unsupported_operator", "affine_select compares with ==, !=, <, <=, > or >=",
                          "write the predicate as one comparison of index expressions, e.g. iy < ix"));
  if (auto r = check_affine(dst, expr, "affine_select"); !r) return r;
  if (auto r = check_on_chip(on_true, "affine_select"); !r) return r;
  if (auto r = check_engine_memory(on_true, Engine::kGpSimd, "affine_select"); !r) return r;
  if (auto r = check_same_partitions(dst, on_true, "affine_select"); !r) return r;
  if (on_true.shape() != dst.shape())
    return fail(
        nki_error("err_store_dst_shape_smaller_than_other_shape",
                  fmt::format("'affine_select' of {} into {}: the shapes differ", on_true.describe(), dst.describe()),
                  "select into a tile of the on_true tile's shape"));
  // Positions where the predicate fails take the constant, written whatever on_true holds there.
  Tensor flags = written_flags(on_true);
  if (flags.defined()) {
    uint8_t* f = flags.data_as<uint8_t>();
    for_each_failing_run(dst.shape(), expr, cmp, [&](int64_t i, std::span<const int64_t>, int64_t begin, int64_t end) {
      std::memset(f + i + begin, 1, static_cast<size_t>(end - begin));
    });
  }
  ctx.trace.add(
      issue_instruction(ctx, Engine::kGpSimd, Opcode::kAffineSelect, loc, dst, {&on_true}, DataFlow::kCustom));
  set_written(dst, flags);
  if (flags.defined()) inherit_stale(dst, std::array{&on_true});
  if (!ctx.compute) return {};
  const float off = f32_from_f64(on_false_value);
  Tensor out = dst.view;
  if (on_true.dtype() == dst.dtype()) {  // no conversion: the selected values are copied bit for bit
    out.assign(on_true.view.contiguous());
    // The constant as one element of dst's type, written over each failing run of each row.
    alignas(8) uint8_t off_bytes[8] = {};
    store_f32(off_bytes, out.dtype(), off);
    const auto size = static_cast<size_t>(out.itemsize());
    const int64_t stride = out.ndim() == 0 ? 0 : out.strides().back() * out.itemsize();
    for_each_failing_run(dst.shape(), expr, cmp,
                         [&](int64_t, std::span<const int64_t> pos, int64_t begin, int64_t end) {
                           auto* row = static_cast<uint8_t*>(out.ptr_at(pos));
                           for (int64_t j = begin; j < end; ++j) std::memcpy(row + j * stride, off_bytes, size);
                         });
    return {};
  }
  Tensor src = on_true.view.astype(DType::kFloat32);
  float* v = src.data_as<float>();
  for_each_failing_run(dst.shape(), expr, cmp, [&](int64_t i, std::span<const int64_t>, int64_t begin, int64_t end) {
    std::fill(v + i + begin, v + i + end, off);
  });
  out.assign(src);
  return {};
}

Result<void> isa_activation(ExecContext& ctx, const Access& dst, std::optional<UnaryOp> op, const Access& src,
                            const std::optional<Access>& bias, double scale, const SourceLoc& loc,
                            const std::optional<Access>& scale_tile, const std::optional<ActivationReduce>& reduce_to) {
  if (auto r = check_tiles(ctx, {&dst, &src}, "activation"); !r) return r;
  if (auto r = check_same_partitions(dst, src, "activation"); !r) return r;
  if (dst.shape() != src.shape())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'activation' of {} into {}: the shapes differ", src.describe(), dst.describe()),
                          "write the result into a tile of the operand's shape"));
  if (bias) {
    if (auto r = check_on_chip(*bias, "activation"); !r) return r;
    if (bias->view.ndim() != 2 || bias->shape()[1] != 1 || bias->partitions() != src.partitions())
      return fail(
          nki_error("err_activation_bias_invalid_type",
                    fmt::format("'activation' bias {} is not a [{}, 1] tile", bias->describe(), src.partitions()),
                    "pass the bias as a [P, 1] tile with one value per partition"));
    const DType bt = bias->dtype();
    if (bt != DType::kFloat32 && bt != DType::kFloat16 && bt != DType::kBFloat16)
      return fail(nki_error("err_activation_bias_invalid_type",
                            fmt::format("'activation' bias {} must be float32, float16 or bfloat16", bias->describe()),
                            "convert the bias first, e.g. nl.copy(bias, dtype=nl.float32)"));
  }
  if (scale_tile) {
    if (auto r = check_on_chip(*scale_tile, "activation"); !r) return r;
    if (scale_tile->view.ndim() != 2 || scale_tile->shape()[1] != 1 || scale_tile->partitions() != src.partitions())
      return fail(nki_error("err_activation_scale_scalar_or_vector",
                            fmt::format("'activation' scale {} is neither a number nor a [{}, 1] tile",
                                        scale_tile->describe(), src.partitions()),
                            "pass the scale as a Python float or a [P, 1] float32 tile with one value per partition"));
    if (scale_tile->dtype() != DType::kFloat32)
      return fail(nki_error("err_activation_scale_invalid_type",
                            fmt::format("'activation' scale {} must be float32", scale_tile->describe()),
                            "create the scale tile as nl.float32"));
  }
  if (reduce_to) {
    const Access& res = reduce_to->res;
    if (auto r = check_on_chip(res, "activation"); !r) return r;
    if (res.partitions() != src.partitions() || res.view.numel() != res.partitions())
      return fail(
          nki_error("nkia_scalar_operand_shape",
                    fmt::format("'activation' reduce_res {} is not a [{}, 1] tile", res.describe(), src.partitions()),
                    "give reduce_res one value per partition: a [P, 1] tile"));
    std::vector<int> free_axes;
    for (int ax = 1; ax < src.view.ndim(); ++ax) free_axes.push_back(ax);
    if (auto r = check_reduction_has_elements(reduce_to->op, src, free_axes, "activation"); !r) return r;
  }
  std::vector<const Access*> reads{&src};
  for (const std::optional<Access>* extra : {&bias, &scale_tile})
    if (*extra) reads.push_back(&**extra);
  const InstrOp opcode(Opcode::kActivation, op ? AluOp(*op) : AluOp(OpMode::kCopy));
  if (reduce_to) follow_reduction(ctx, instruction_text(opcode), loc, src, reduce_to->res);
  InstructionRecord rec = issue_instruction(ctx, Engine::kScalar, opcode, loc, dst, reads, DataFlow::kElementwise);
  if (reduce_to) rec.operands.push_back(record_operand(reduce_to->res, true));
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  // The Scalar engine computes op(x * scale + bias) in float32 and rounds once on output.
  Tensor x = src.view.astype(DType::kFloat32);
  Shape per_partition(static_cast<size_t>(x.ndim()), 1);  // [P, 1, ..., 1]: broadcast over the free axes
  per_partition[0] = src.partitions();
  if (scale_tile)
    x = binary(BinaryOp::kMultiply, x, scale_tile->view.reshape(per_partition), DType::kFloat32);
  else if (scale != 1.0)
    x = binary(BinaryOp::kMultiply, x, Tensor::full({}, DType::kFloat32, scale));
  if (bias) x = binary(BinaryOp::kAdd, x, bias->view.astype(DType::kFloat32).reshape(per_partition), DType::kFloat32);
  if (op) warn_activation_range(ctx, *op, x, loc);
  Tensor out = dst.view;
  if (!reduce_to) {
    if (op)
      unary_into(*op, x, out);
    else
      out.assign(x);
    return {};
  }
  // The accumulator reduces the engine's float32 results, before their rounding into dst.
  Tensor y = op ? unary(*op, x) : x;
  out.assign(y);
  std::vector<int> free_axes;
  for (int ax = 1; ax < y.ndim(); ++ax) free_axes.push_back(ax);
  Tensor r = reduce(reduce_to->op, y, free_axes, /*keepdims=*/false, DType::kFloat32);
  Tensor res = reduce_to->res.view;
  res.assign(r.reshape(res.shape()));
  return {};
}

Result<void> isa_tensor_reduce(ExecContext& ctx, const Access& dst, ReduceOp op, const Access& src,
                               const std::vector<int>& axes, bool negate, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kTensorReduce);
  if (auto r = check_on_chip(src, kOp); !r) return r;
  if (auto r = check_on_chip(dst, kOp); !r) return r;
  if (auto r = check_partition_limit(ctx, src, kOp); !r) return r;
  for (const Access* a : {&src, &dst}) {
    if (auto r = check_partition_access(*a, kOp); !r) return r;
    if (auto r = check_free_size(ctx, *a, Engine::kVector, kOp); !r) return r;
  }
  for (int ax : axes)
    if (ax <= 0 || ax >= src.view.ndim())
      return fail(nki_error("nkia_reduce_axes",
                            fmt::format("'{}' of {} over axis {}: only free axes (1..{}) can be reduced", kOp,
                                        src.describe(), ax, src.view.ndim() - 1),
                            "reduce along the free axes; for the partition axis transpose first or matmul with a "
                            "ones vector"));
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  if (auto r = check_reduction_has_elements(op, src, axes, kOp); !r) return r;
  // The values left: the sizes of the axes not reduced (reduce() takes no axes as all of them).
  int64_t kept = 1;
  for (int ax = 0; ax < src.view.ndim(); ++ax) {
    const auto named = std::count(axes.begin(), axes.end(), ax);
    if (named > 1)
      return fail(nki_error("nkia_reduce_axes", fmt::format("'{}' of {} names axis {} twice", kOp, src.describe(), ax),
                            "name each reduced axis once"));
    if (named == 0 && !axes.empty()) kept *= src.shape()[static_cast<size_t>(ax)];
  }
  if (kept != dst.view.numel())
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} gives {} values per tile, but the destination is {}", kOp,
                                      src.describe(), kept, dst.describe()),
                          "allocate the destination as the source's shape without the reduced axes (or with them "
                          "as size 1)"));
  const InstrOp opcode(Opcode::kTensorReduce, op);
  Tensor kept_flags;
  if (Tensor flags = written_flags(src); flags.defined()) {
    bool mixed = false;
    kept_flags = reduce_flags(flags, axes, mixed);
    if (mixed) note_stale(dst, instruction_text(opcode), loc, src);
    kept_flags = kept_flags.reshape(dst.shape());
  }
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, opcode, loc, dst, {&src}, DataFlow::kCustom));
  set_written(dst, kept_flags);
  if (kept_flags.defined()) inherit_stale(dst, std::array{&src});
  if (!ctx.compute) return {};
  Tensor r = reduce(op, src.view, axes, /*keepdims=*/false, DType::kFloat32);
  if (negate) r = unary(UnaryOp::kNegative, r);
  Tensor out = dst.view;
  out.assign(r.reshape(dst.shape()));
  return {};
}

namespace {

// src as float32 values laid out [P, free elements], contiguous.
Tensor as_rows(const Access& a) {
  Tensor t = a.view.astype(DType::kFloat32);
  return t.reshape({a.partitions(), a.partitions() ? t.numel() / a.partitions() : 0});
}

}  // namespace

Result<void> isa_tensor_tensor_scan(ExecContext& ctx, const Access& dst, const Access& data0, const Access& data1,
                                    double initial, const std::optional<Access>& initial_tile, BinaryOp op0,
                                    BinaryOp op1, bool reverse0, bool reverse1, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kTensorTensorScan);
  if (auto r = check_tiles(ctx, {&dst, &data0, &data1}, kOp); !r) return r;
  if (auto r = check_same_partitions(data0, data1, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data0, kOp); !r) return r;
  if (data0.buffer() == Buffer::kPsum && data1.buffer() == Buffer::kPsum)
    return fail(nki_error("nkia_both_inputs_in_psum", fmt::format("'{}' reads both inputs from PSUM", kOp),
                          "copy one of the inputs to SBUF first"));
  if (data0.view.numel() != data1.view.numel() || dst.view.numel() != data0.view.numel())
    return fail(nki_error(
        "nkia_free_size_mismatch",
        fmt::format("'{}' needs equal sizes: {}, {} and {}", kOp, data0.describe(), data1.describe(), dst.describe()),
        "give both inputs and the destination the same shape"));
  const int64_t p = data0.partitions(), n = p ? data0.view.numel() / p : 0;
  if (initial_tile) {
    if (auto r = check_on_chip(*initial_tile, kOp); !r) return r;
    if (initial_tile->view.numel() != p)
      return fail(
          nki_error("nkia_scalar_operand_shape",
                    fmt::format("'{}' initial {} is not one value per partition", kOp, initial_tile->describe()),
                    fmt::format("pass a [{}, 1] tile or a number", p)));
  }
  const InstrOp opcode(Opcode::kTensorTensorScan, op0, op1);
  // The initial tile is read like the inputs (its pending load carried out first).
  std::vector<const Access*> reads{&data0, &data1};
  if (initial_tile) reads.push_back(&*initial_tile);
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, opcode, loc, dst, reads, DataFlow::kCustom));
  follow_scan(ctx, instruction_text(opcode), loc, dst, {&data0, &data1}, initial_tile ? &*initial_tile : nullptr);
  if (!ctx.compute) return {};
  std::vector<float> init(static_cast<size_t>(p), f32_from_f64(initial));
  if (initial_tile) init = initial_tile->view.to_f32_vector();
  Tensor a = as_rows(data0), b = as_rows(data1);
  Tensor res = Tensor::uninitialized({p, n}, DType::kFloat32);
  const float* x = a.data_as<float>();
  const float* y = b.data_as<float>();
  float* out = res.data_as<float>();
  for (int64_t i = 0; i < p; ++i) {
    float prev = init[static_cast<size_t>(i)];
    for (int64_t j = 0; j < n; ++j) {
      const float d0 = x[i * n + j], d1 = y[i * n + j];
      const float t = reverse0 ? binary_op_f32(op0, prev, d0) : binary_op_f32(op0, d0, prev);
      prev = reverse1 ? binary_op_f32(op1, d1, t) : binary_op_f32(op1, t, d1);
      out[i * n + j] = prev;
    }
  }
  Tensor o = dst.view;
  o.assign(res.reshape(dst.shape()));
  return {};
}

Result<void> isa_bn_stats(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kBnStats);
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  const int64_t p = src.partitions(), n = p ? src.view.numel() / p : 0;
  const int64_t fmax = ctx.target->bn_stats_fmax;  // nl.tile_size.bn_stats_fmax
  if (n > fmax)
    return fail(nki_error(
        "err_size_of_dimension_exceed_arch_limit",
        fmt::format("'{}' of {}: {} elements per partition exceed the limit of {}", kOp, src.describe(), n, fmax),
        fmt::format("compute bn_stats on chunks of {} and combine them with bn_aggr", fmax)));
  if (dst.view.numel() != p * 6)
    return fail(
        nki_error("err_store_dst_shape_smaller_than_other_shape",
                  fmt::format("'{}' writes 6 values per partition, but the destination is {}", kOp, dst.describe()),
                  fmt::format("allocate the statistics as [{}, 6]", p)));
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, Opcode::kBnStats, loc, dst, {&src}, DataFlow::kPerPartition));
  if (!ctx.compute) return {};
  Tensor x = as_rows(src);
  Tensor res = Tensor::uninitialized({p, 6}, DType::kFloat32);
  for (int64_t i = 0; i < p; ++i) {
    const float* row = x.data_as<float>() + i * n;
    for (int parity = 0; parity < 2; ++parity) {
      double sum = 0, sq = 0;
      int64_t count = 0;
      for (int64_t j = parity; j < n; j += 2, ++count) sum += row[j];
      const double mean = count ? sum / static_cast<double>(count) : 0;
      for (int64_t j = parity; j < n; j += 2) sq += (row[j] - mean) * (row[j] - mean);
      float* o = res.data_as<float>() + i * 6 + parity * 3;
      o[0] = static_cast<float>(count);
      o[1] = static_cast<float>(mean);
      o[2] = static_cast<float>(sq);  // var * count
    }
  }
  Tensor out = dst.view;
  out.assign(res.reshape(dst.shape()));
  return {};
}

Result<void> isa_bn_aggr(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kBnAggr);
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  const int64_t p = src.partitions(), n = p ? src.view.numel() / p : 0;
  if (n % 3 != 0 || n == 0)
    return fail(nki_error(
        "nkia_bn_aggr_stats_size",
        fmt::format("'{}' of {}: {} values per partition are not (count, mean, M2) triples", kOp, src.describe(), n),
        "pass the output of bn_stats (6 values per partition per chunk)"));
  if (dst.view.numel() != p * 2)
    return fail(nki_error(
        "err_store_dst_shape_smaller_than_other_shape",
        fmt::format("'{}' writes mean and variance per partition, but the destination is {}", kOp, dst.describe()),
        fmt::format("allocate the result as [{}, 2]", p)));
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, Opcode::kBnAggr, loc, dst, {&src}, DataFlow::kPerPartition));
  if (!ctx.compute) return {};
  Tensor x = as_rows(src);
  Tensor res = Tensor::uninitialized({p, 2}, DType::kFloat32);
  for (int64_t i = 0; i < p; ++i) {
    const float* row = x.data_as<float>() + i * n;
    double count = 0, mean = 0, m2 = 0;  // Chan et al.'s pairwise combination
    for (int64_t k = 0; k < n; k += 3) {
      const double c = row[k], mu = row[k + 1], s2 = row[k + 2];
      if (c <= 0) continue;
      const double total = count + c, delta = mu - mean;
      mean += delta * c / total;
      m2 += s2 + delta * delta * count * c / total;
      count = total;
    }
    res.data_as<float>()[i * 2] = static_cast<float>(mean);
    res.data_as<float>()[i * 2 + 1] = static_cast<float>(count > 0 ? m2 / count : 0);
  }
  Tensor out = dst.view;
  out.assign(res.reshape(dst.shape()));
  return {};
}

Result<void> isa_memset(ExecContext& ctx, const Access& dst, double value, Engine engine, const SourceLoc& loc) {
  if (auto r = check_on_chip(dst, "memset"); !r) return r;
  if (auto r = check_partition_limit(ctx, dst, "memset"); !r) return r;
  ctx.trace.add(issue_instruction(ctx, engine, Opcode::kMemset, loc, dst, {}));
  if (!ctx.compute) return {};
  Tensor out = dst.view;
  out.fill(value);
  return {};
}

Result<void> isa_tensor_copy(ExecContext& ctx, const Access& dst, const Access& src, Engine engine,
                             const SourceLoc& loc) {
  if (auto r = check_tiles(ctx, {&dst, &src}, "tensor_copy", engine); !r) return r;
  if (auto r = check_same_partitions(dst, src, "tensor_copy"); !r) return r;
  if (!same_squeezed(dst.shape(), src.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'tensor_copy' of {} into {}: the shapes differ", src.describe(), dst.describe()),
                          "index the source and the destination so that both select the same shape"));
  ctx.trace.add(issue_instruction(ctx, engine, Opcode::kTensorCopy, loc, dst, {&src}, DataFlow::kElementwise));
  if (!ctx.compute) return {};
  Tensor out = dst.view;
  out.assign(as_shape_of(src.view, dst.shape()));
  return {};
}

}  // namespace nki_agent
