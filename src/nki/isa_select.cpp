#include "nki/isa_select.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string_view>

#include "nki/checks.h"
#include "nki/written.h"

namespace nki_agent {

namespace {

// An operand's values as float32 rows: [P, free elements], contiguous (a copy).
Tensor rows_f32(const Access& a) {
  Tensor t = a.view.astype(DType::kFloat32).contiguous();
  const int64_t p = a.partitions();
  return t.reshape({p, p ? t.numel() / p : 0});
}

int64_t per_partition(const Access& a) {
  const int64_t p = a.partitions();
  return p ? a.view.numel() / p : 0;
}

// Writes float32 rows [P, n] into dst (rounding once into its dtype).
void store_rows(const Access& dst, const Tensor& rows) {
  Tensor out = dst.view;
  out.assign(rows.reshape(dst.shape()));
}

Result<void> check_column(const Access& t, int64_t partitions, const char* op, const char* role) {
  if (auto r = check_on_chip(t, op); !r) return r;
  if (t.partitions() != partitions || per_partition(t) != 1)
    return fail(nki_error("nkia_scalar_operand_shape",
                          fmt::format("'{}' {} {} is not a [{}, 1] tile", op, role, t.describe(), partitions),
                          "pass a [P, 1] tile with one value per partition of the data"));
  return {};
}

// vals (8 values searched per partition) are nkia_max8_input_size; destinations of the wrong size
// err_size_of_dimension_exceed_arch_limit.
Result<void> check_count(const Access& t, int64_t want, const char* op, const char* role) {
  if (per_partition(t) == want) return {};
  return fail(
      nki_error(std::string_view(role) == "vals" ? "nkia_max8_input_size" : "err_size_of_dimension_exceed_arch_limit",
                fmt::format("'{}' {} {} must hold exactly {} elements per partition", op, role, t.describe(), want),
                fmt::format("give the {} the shape [P, {}] (for vals: the whole output of nisa.max8)", role, want)));
}

// The data of the max8 family: at least 8 elements per partition (nkia_max8_input_size), at most
// the target's max8_fmax (err_size_of_dimension_exceed_arch_limit).
Result<void> check_max8_data(const ExecContext& ctx, const Access& t, const char* op) {
  const int64_t n = per_partition(t);
  if (n < 8)
    return fail(nki_error("nkia_max8_input_size",
                          fmt::format("'{}' needs at least 8 elements per partition, {} has {}", op, t.describe(), n),
                          "pad each row to at least 8 elements (with nl.fp32.min, which never wins)"));
  const int64_t fmax = ctx.target->max8_fmax;
  if (n > fmax)
    return fail(
        nki_error("err_size_of_dimension_exceed_arch_limit",
                  fmt::format("'{}' reads at most {} elements per partition, but {} has {}", op, fmax, t.describe(), n),
                  fmt::format("split the row into chunks of at most {} elements, take the top 8 of each chunk, and "
                              "run the instruction again over the collected candidates",
                              fmax)));
  return {};
}

bool is_int(DType t) {
  return !dtype_is_float(t);
}

}  // namespace

Result<void> isa_max8(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kMax8;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  const int64_t n = per_partition(src);
  if (auto r = check_max8_data(ctx, src, kOp); !r) return r;
  if (auto r = check_count(dst, 8, kOp, "destination"); !r) return r;
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, kCode, loc, dst, {&src}, DataFlow::kPerPartition));
  if (!ctx.compute) return {};
  Tensor in = rows_f32(src);
  const int64_t p = src.partitions();
  Tensor out = Tensor::uninitialized({p, 8}, DType::kFloat32);
  const float* x = in.data_as<float>();
  float* y = out.data_as<float>();
  std::vector<float> row;
  for (int64_t i = 0; i < p; ++i) {
    row.assign(x + i * n, x + (i + 1) * n);
    // Descending, NaN first (the hardware's max treats NaN as largest).
    auto greater = [](float a, float b) { return std::isnan(a) ? !std::isnan(b) : (!std::isnan(b) && a > b); };
    std::partial_sort(row.begin(), row.begin() + 8, row.end(), greater);
    std::copy(row.begin(), row.begin() + 8, y + i * 8);
  }
  store_rows(dst, out);
  return {};
}

Result<void> isa_find_index8(ExecContext& ctx, const Access& dst, const Access& data, const Access& vals,
                             const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kFindIndex8;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &data, &vals}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (auto r = check_same_partitions(vals, data, kOp); !r) return r;
  if (dst.dtype() != DType::kUInt32 && dst.dtype() != DType::kUInt16)
    return fail(nki_error("nkia_find_index8_output_dtype",
                          fmt::format("'{}' writes indices as uint32 or uint16, not into {}", kOp, dst.describe()),
                          "create the destination as nl.uint32"));
  const int64_t n = per_partition(data);
  if (auto r = check_max8_data(ctx, data, kOp); !r) return r;
  if (auto r = check_count(vals, 8, kOp, "vals"); !r) return r;
  if (auto r = check_count(dst, 8, kOp, "destination"); !r) return r;
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, kCode, loc, dst, {&data, &vals}, DataFlow::kPerPartition));
  if (!ctx.compute) return {};
  Tensor x = rows_f32(data), v = rows_f32(vals);
  const int64_t p = data.partitions();
  const double missing = dst.dtype() == DType::kUInt32 ? 4294967295.0 : 65535.0;
  std::vector<int64_t> idx(static_cast<size_t>(p * 8));
  for (int64_t i = 0; i < p; ++i) {
    const float* row = x.data_as<float>() + i * n;
    std::vector<bool> used(static_cast<size_t>(n), false);
    // vals in order, each taking the first match not taken yet: a value repeated in vals (ties of
    // max8) pairs with its successive occurrences in ascending order; once they are all taken it
    // gets the first again.
    for (int64_t j = 0; j < 8; ++j) {
      const float want = v.data_as<float>()[i * 8 + j];
      int64_t first = -1, hit = -1;
      for (int64_t k = 0; k < n && hit < 0; ++k) {
        if (row[k] != want) continue;
        if (first < 0) first = k;
        if (!used[static_cast<size_t>(k)]) hit = k;
      }
      if (hit < 0) hit = first;
      if (hit >= 0) used[static_cast<size_t>(hit)] = true;
      idx[static_cast<size_t>(i * 8 + j)] = hit < 0 ? static_cast<int64_t>(missing) : hit;
    }
  }
  Tensor out = dst.view;
  out.assign(Tensor::from_i64({p, 8}, idx, DType::kUInt32).reshape(dst.shape()));
  return {};
}

Result<void> isa_match_replace8(ExecContext& ctx, const Access& dst, const Access& data, const Access& vals, double imm,
                                const std::optional<Access>& dst_idx, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kMatchReplace8;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &data, &vals}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (auto r = check_same_partitions(vals, data, kOp); !r) return r;
  const int64_t n = per_partition(data);
  if (auto r = check_max8_data(ctx, data, kOp); !r) return r;
  if (auto r = check_count(vals, 8, kOp, "vals"); !r) return r;
  if (per_partition(dst) != n)
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' writes {} elements per partition into {}", kOp, n, dst.describe()),
                          "give the destination the data's shape"));
  if (dst_idx) {
    if (auto r = check_on_chip(*dst_idx, kOp); !r) return r;
    if (auto r = check_same_partitions(*dst_idx, data, kOp); !r) return r;
    if (auto r = check_count(*dst_idx, 8, kOp, "dst_idx"); !r) return r;
  }
  InstructionRecord rec =
      issue_instruction(ctx, Engine::kVector, kCode, loc, dst, {&data, &vals}, DataFlow::kElementwise);
  if (dst_idx) {
    prepare_second_destination(*dst_idx);
    mark_written(*dst_idx);
    rec.operands.push_back(record_operand(*dst_idx, true));
  }
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  Tensor x = rows_f32(data), v = rows_f32(vals);
  const int64_t p = data.partitions();
  std::vector<int64_t> idx(static_cast<size_t>(p * 8), -1);
  const float repl = static_cast<float>(imm);
  for (int64_t i = 0; i < p; ++i) {
    float* row = x.data_as<float>() + i * n;
    std::vector<bool> used(static_cast<size_t>(n), false);
    // vals from the last to the first, each taking the first unused match: a value repeated in vals
    // pairs its highest slot with the earliest match (the instruction's documented tie-break, the
    // opposite of nc_find_index8's).
    for (int64_t j = 7; j >= 0; --j) {
      const float want = v.data_as<float>()[i * 8 + j];
      for (int64_t k = 0; k < n; ++k)
        if (!used[static_cast<size_t>(k)] && row[k] == want) {
          used[static_cast<size_t>(k)] = true;
          idx[static_cast<size_t>(i * 8 + j)] = k;
          break;
        }
    }
    for (int64_t j = 0; j < 8; ++j)
      if (idx[static_cast<size_t>(i * 8 + j)] >= 0) row[idx[static_cast<size_t>(i * 8 + j)]] = repl;
  }
  store_rows(dst, x);
  if (dst_idx) {
    Tensor out = dst_idx->view;
    out.assign(Tensor::from_i64({p, 8}, idx, DType::kInt32).reshape(dst_idx->shape()));
  }
  return {};
}

Result<void> isa_stream_shuffle(ExecContext& ctx, const Access& dst, const Access& src,
                                const std::vector<int64_t>& mask, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kStreamShuffle;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp); !r) return r;
  if (mask.size() != 32)
    return fail(
        nki_error("nkia_stream_shuffle_operands",
                  fmt::format("'{}' takes a shuffle_mask of 32 entries, got {}", kOp, mask.size()),
                  "give one source partition (0-31, or 255 to keep) for each of the 32 partitions of a quadrant"));
  if (dst.dtype() != src.dtype() || per_partition(dst) != per_partition(src))
    return fail(nki_error("nkia_stream_shuffle_operands",
                          fmt::format("'{}' moves {} into {}: dtype and elements per partition must match", kOp,
                                      src.describe(), dst.describe()),
                          "create the destination with the source's dtype and free shape"));
  for (size_t i = 0; i < mask.size(); ++i) {
    const int64_t m = mask[i];
    if (m == 255 || static_cast<int64_t>(i) >= dst.partitions()) continue;
    if (m < 0 || m >= 32 || m >= src.partitions())
      return fail(nki_error(
          "nkia_stream_shuffle_operands",
          fmt::format("'{}' shuffle_mask[{}] = {} names no partition of the source {}", kOp, i, m, src.describe()),
          "use source partitions 0-31 that exist in the source tile, or 255 to keep the destination"));
  }
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, kCode, loc, dst, {&src}));
  if (!ctx.compute) return {};
  Tensor in = src.view.copy();  // a copy first: src and dst may be the same tile
  for (int64_t i = 0; i < dst.partitions(); ++i) {
    const int64_t m = mask[static_cast<size_t>(i % 32)];
    if (m == 255) continue;
    const int64_t from = (i / 32) * 32 + m;
    if (from >= src.partitions())
      return fail(nki_error(
          "nkia_stream_shuffle_operands",
          fmt::format("'{}': destination partition {} reads source partition {} of {}", kOp, i, from, src.describe()),
          "give the source as many quadrants as the destination"));
    Tensor row = dst.view.select(0, i);
    row.assign(in.select(0, from).reshape(row.shape()));
  }
  return {};
}

namespace {

// Writes sel into dst and, when asked, the row maxima of sel (float32, before the downcast) into reduce_res.
void finish_select(const Access& dst, Tensor& sel, const std::optional<Access>& reduce_res) {
  store_rows(dst, sel);
  if (!reduce_res) return;
  // The maximum of the selected values in float32, before dst's downcast: the engine's accumulator
  // sees the ALU's float32 results (with a bfloat16 dst, a float32.min fill is -inf in dst but
  // float32.min in reduce_res, the documented way to keep range_select -> activation free of NaN).
  Tensor mx = reduce(ReduceOp::kMax, sel, std::vector<int>{1}, /*keepdims=*/true, DType::kFloat32);
  Tensor out = reduce_res->view;
  out.assign(mx.reshape(reduce_res->shape()));
}

}  // namespace

Result<void> isa_range_select(ExecContext& ctx, const Access& dst, const Access& on_true, BinaryOp cmp0, BinaryOp cmp1,
                              const Access& bound0, const Access& bound1, double range_start, double on_false_value,
                              const std::optional<Access>& reduce_res, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kRangeSelect;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_core_version(ctx, 3, kOp,
                                  "on NeuronCore-v2 build the mask from nisa.iota and comparisons (or "
                                  "nisa.affine_select) and select with nl.where / nisa.select_reduce, or select a "
                                  "trn2 target");
      !r)
    return r;
  if (auto r = check_tiles(ctx, {&dst, &on_true}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, on_true, kOp); !r) return r;
  if (per_partition(dst) != per_partition(on_true))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} into {}: the shapes differ", kOp, on_true.describe(), dst.describe()),
                          "give the destination the shape of on_true_tile"));
  for (BinaryOp c : {cmp0, cmp1})
    if (c != BinaryOp::kEqual && c != BinaryOp::kLess && c != BinaryOp::kLessEqual && c != BinaryOp::kGreater &&
        c != BinaryOp::kGreaterEqual)
      return fail(
          nki_error("nkia_unsupported_operator",
                    fmt::format("'{}' compares with {}, which is not a range comparison", kOp, binary_op_name(c)),
                    "use nl.equal, nl.less, nl.less_equal, nl.greater or nl.greater_equal"));
  if (auto r = check_column(bound0, on_true.partitions(), kOp, "bound0"); !r) return r;
  if (auto r = check_column(bound1, on_true.partitions(), kOp, "bound1"); !r) return r;
  if (reduce_res)
    if (auto r = check_column(*reduce_res, on_true.partitions(), kOp, "reduce_res"); !r) return r;
  if (reduce_res) follow_reduction(ctx, kOp, loc, on_true, *reduce_res);
  InstructionRecord rec =
      issue_instruction(ctx, Engine::kVector, kCode, loc, dst, {&on_true, &bound0, &bound1}, DataFlow::kElementwise);
  if (reduce_res) rec.operands.push_back(record_operand(*reduce_res, true));
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  Tensor x = rows_f32(on_true), b0 = rows_f32(bound0), b1 = rows_f32(bound1);
  const int64_t p = on_true.partitions(), n = per_partition(on_true);
  float* v = x.data_as<float>();
  for (int64_t i = 0; i < p; ++i)
    for (int64_t k = 0; k < n; ++k) {
      const float idx = static_cast<float>(range_start + static_cast<double>(k));
      const bool keep = binary_op_f32(cmp0, idx, b0.data_as<float>()[i]) != 0.0f &&
                        binary_op_f32(cmp1, idx, b1.data_as<float>()[i]) != 0.0f;
      if (!keep) v[i * n + k] = static_cast<float>(on_false_value);
    }
  finish_select(dst, x, reduce_res);
  return {};
}

Result<void> isa_select_reduce(ExecContext& ctx, const Access& dst, const Access& predicate, const Access& on_true,
                               double on_false_value, const std::optional<Access>& on_false_tile, bool reverse,
                               const std::optional<Access>& reduce_res, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kSelectReduce;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &predicate, &on_true}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, on_true, kOp); !r) return r;
  if (auto r = check_same_partitions(predicate, on_true, kOp); !r) return r;
  if (per_partition(dst) != per_partition(on_true) || per_partition(predicate) != per_partition(on_true))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}': predicate {}, on_true {} and destination {} must have one shape", kOp,
                                      predicate.describe(), on_true.describe(), dst.describe()),
                          "give the predicate and the destination the shape of on_true"));
  if (!is_int(predicate.dtype()))
    return fail(nki_error("nkia_predicate_dtype",
                          fmt::format("'{}' predicate {} must be an integer tile", kOp, predicate.describe()),
                          "compute the predicate into an nl.uint8 (or int8/16) tile"));
  if (on_false_tile)
    if (auto r = check_column(*on_false_tile, on_true.partitions(), kOp, "on_false"); !r) return r;
  if (reduce_res)
    if (auto r = check_column(*reduce_res, on_true.partitions(), kOp, "reduce_res"); !r) return r;
  if (reduce_res) follow_reduction(ctx, kOp, loc, on_true, *reduce_res);
  std::vector<const Access*> reads{&predicate, &on_true};
  if (on_false_tile) reads.push_back(&*on_false_tile);
  InstructionRecord rec = issue_instruction(ctx, Engine::kVector, kCode, loc, dst, reads, DataFlow::kElementwise);
  if (reduce_res) rec.operands.push_back(record_operand(*reduce_res, true));
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  Tensor x = rows_f32(on_true), pr = rows_f32(predicate);
  std::optional<Tensor> f;
  if (on_false_tile) f = rows_f32(*on_false_tile);
  const int64_t p = on_true.partitions(), n = per_partition(on_true);
  float* v = x.data_as<float>();
  for (int64_t i = 0; i < p; ++i)
    for (int64_t k = 0; k < n; ++k) {
      const bool t = (pr.data_as<float>()[i * n + k] != 0.0f) != reverse;
      if (!t) v[i * n + k] = f ? f->data_as<float>()[i] : static_cast<float>(on_false_value);
    }
  finish_select(dst, x, reduce_res);
  return {};
}

Result<void> isa_copy_predicated(ExecContext& ctx, const Access& dst, const std::optional<Access>& src, double value,
                                 const Access& predicate, bool reverse, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kTensorCopyPredicated;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &predicate}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, predicate, kOp); !r) return r;
  if (per_partition(dst) != per_partition(predicate))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}': predicate {} and destination {} must have one shape", kOp,
                                      predicate.describe(), dst.describe()),
                          "give the predicate the destination's shape"));
  if (!is_int(predicate.dtype()))
    return fail(nki_error("nkia_predicate_dtype",
                          fmt::format("'{}' predicate {} must be an integer tile", kOp, predicate.describe()),
                          "compute the predicate into an nl.uint8 (or uint16/uint32) tile"));
  if (src) {
    if (auto r = check_tiles(ctx, {&*src}, kOp); !r) return r;
    if (auto r = check_same_partitions(dst, *src, kOp); !r) return r;
    if (per_partition(*src) != per_partition(dst))
      return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                            fmt::format("'{}' of {} into {}: the shapes differ", kOp, src->describe(), dst.describe()),
                            "give the source the destination's shape"));
  }
  // Where the predicate holds, dst takes src's element; elsewhere it keeps its own.
  std::vector<const Access*> reads{&predicate};
  if (src) reads.push_back(&*src);
  InstructionRecord rec = issue_instruction(ctx, Engine::kVector, kCode, loc, dst, reads, DataFlow::kElementwise);
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  // dst's rows gathered into one contiguous copy, the chosen elements' bytes replaced (from src in dst's
  // element type, or the value), and written back whole: unchosen elements keep their exact bits.
  Tensor pr = rows_f32(predicate);
  const int64_t p = dst.partitions(), n = per_partition(dst);
  Tensor merged = dst.view.copy().reshape({p, n});
  Tensor in;
  if (src) {
    in = Tensor::uninitialized(src->view.shape(), dst.dtype());
    in.assign(src->view);  // converted as an assign into dst converts
  } else {
    in = Tensor::uninitialized({1}, dst.dtype());
    in.fill(value);
  }
  const auto size = static_cast<size_t>(merged.itemsize());
  const auto* from = static_cast<const uint8_t*>(std::as_const(in).data());
  auto* to = static_cast<uint8_t*>(merged.data());
  const float* chosen = pr.data_as<float>();
  for (int64_t e = 0; e < p * n; ++e) {
    if ((chosen[e] != 0.0f) == reverse) continue;
    std::memcpy(to + static_cast<size_t>(e) * size, from + (src ? static_cast<size_t>(e) * size : 0), size);
  }
  Tensor d = dst.view;
  d.assign(merged.reshape(dst.shape()));
  return {};
}

Result<void> isa_partition_reduce(ExecContext& ctx, const Access& dst, BinaryOp op, const Access& data,
                                  const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kTensorPartitionReduce;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &data}, kOp, Engine::kGpSimd); !r) return r;
  const bool bitwise = op == BinaryOp::kBitwiseAnd || op == BinaryOp::kBitwiseOr;
  if (op != BinaryOp::kAdd && op != BinaryOp::kMaximum && op != BinaryOp::kMinimum && !bitwise)
    return fail(nki_error("nkia_unsupported_operator",
                          fmt::format("'{}' reduces with add, maximum, minimum, bitwise_and or bitwise_or, not {}", kOp,
                                      binary_op_name(op)),
                          "use nl.add, nl.maximum, nl.minimum, nl.bitwise_and or nl.bitwise_or"));
  if (bitwise && (!is_int(data.dtype()) || !is_int(dst.dtype())))
    return fail(nki_error("nkia_bitvec_op_needs_integer",
                          fmt::format("'{}' with {} needs integer tiles, got {} and {}", kOp, binary_op_name(op),
                                      data.describe(), dst.describe()),
                          "use integer dtypes for bitwise reductions"));
  if (dst.partitions() != 1 || per_partition(dst) != per_partition(data))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} gives one partition of {} elements, but the destination is {}", kOp,
                                      data.describe(), per_partition(data), dst.describe()),
                          "allocate the destination as [1, F] with the data's free size"));
  const InstrOp opcode(kCode, op);
  Tensor flags = written_flags(data);  // each result combines one element of every partition
  if (flags.defined()) {
    bool mixed = false;
    const int axis0[] = {0};
    flags = reduce_flags(flags.reshape({data.partitions(), per_partition(data)}), axis0, mixed).reshape(dst.shape());
    if (mixed) note_stale(dst, instruction_text(opcode), loc, data);
  }
  ctx.trace.add(issue_instruction(ctx, Engine::kGpSimd, opcode, loc, dst, {&data}, DataFlow::kCustom));
  set_written(dst, flags);
  if (flags.defined()) inherit_stale(dst, std::array{&data});
  if (!ctx.compute) return {};
  const int64_t p = data.partitions(), n = per_partition(data);
  Tensor in = data.view.contiguous().reshape({p, n});
  Tensor acc = in.select(0, 0).astype(bitwise ? DType::kInt32 : DType::kFloat32);
  for (int64_t i = 1; i < p; ++i) {
    Tensor row = in.select(0, i);
    if (!bitwise) row = row.astype(DType::kFloat32);
    acc = binary(op, acc, row, acc.dtype());
  }
  Tensor out = dst.view;
  out.assign(acc.reshape(dst.shape()));
  return {};
}

namespace {

// An indirect DMA's row number past the end of its rows; `at` names the index ("partition 3").
Diagnostic row_out_of_bounds(const char* op, const std::string& at, int64_t row, const Access& rows) {
  return nki_error("nkia_indirect_index_out_of_bounds",
                   fmt::format("'{}': {} asks for row {} of {}, which has {} rows", op, at, row, rows.describe(),
                               rows.view.shape()[0]),
                   "keep the row numbers within the tensor, or pass oob_mode=nisa.oob_mode.skip");
}

Result<void> check_index_tile(const Access& index, int64_t partitions, const char* op) {
  if (index.buffer() != Buffer::kSbuf || (index.dtype() != DType::kInt32 && index.dtype() != DType::kUInt32) ||
      index.partitions() != partitions)
    return fail(nki_error("nkia_indirect_index_tile",
                          fmt::format("'{}' index {} must be an int32 or uint32 SBUF tile with {} partitions", op,
                                      index.describe(), partitions),
                          "load the indices into an SBUF tile and convert them with nl.copy(idx, dtype=nl.int32)"));
  return {};
}

}  // namespace

Result<void> isa_gather_flattened(ExecContext& ctx, const Access& dst, const Access& data, const Access& indices,
                                  const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kGatherFlattened;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &data, &indices}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (auto r = check_index_tile(indices, data.partitions(), kOp); !r) return r;
  if (per_partition(dst) != per_partition(indices))
    return fail(nki_error(
        "err_store_dst_shape_smaller_than_other_shape",
        fmt::format("'{}' gathers {} elements per partition into {}", kOp, per_partition(indices), dst.describe()),
        "give the result the indices' shape"));
  ctx.trace.add(issue_instruction(ctx, Engine::kGpSimd, kCode, loc, dst, {&data, &indices}));
  if (!ctx.compute) return {};
  const int64_t p = data.partitions(), n = per_partition(data), k = per_partition(indices);
  Tensor src = data.view.contiguous().reshape({p, n});
  const std::vector<int64_t> idx = indices.view.contiguous().to_i64_vector();
  Tensor out = Tensor::uninitialized({p, k}, data.dtype());
  // Both sides are contiguous [p, n] and [p, k] of one element type: each pick is one element's bytes.
  const auto size = static_cast<size_t>(src.itemsize());
  const auto* from = static_cast<const uint8_t*>(std::as_const(src).data());
  auto* to = static_cast<uint8_t*>(out.data());
  for (int64_t i = 0; i < p; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t at = idx[static_cast<size_t>(i * k + j)];
      if (at < 0 || at >= n)
        return fail(nki_error("nkia_indirect_index_out_of_bounds",
                              fmt::format("'{}': partition {} index {} is outside its {} elements", kOp, i, at, n),
                              "keep every index within the data's elements per partition"));
      std::memcpy(to + static_cast<size_t>(i * k + j) * size, from + static_cast<size_t>(i * n + at) * size, size);
    }
  Tensor o = dst.view;
  o.assign(out.reshape(dst.shape()));
  return {};
}

Result<void> isa_dma_indirect(ExecContext& ctx, const Access& tile, const Access& rows, const Access& index,
                              bool gather, bool skip_oob, const SourceLoc& loc, std::optional<BinaryOp> rmw) {
  const char* op = gather ? "dma_copy (indirect gather)" : "dma_copy (indirect scatter)";
  if (rmw && *rmw != BinaryOp::kAdd)
    return fail(nki_error("nkia_unsupported_operator",
                          fmt::format("'{}' accumulates with dst_rmw_op=nl.add only, not {}", op, binary_op_name(*rmw)),
                          "pass dst_rmw_op=nl.add, or gather the rows, combine them on an engine and scatter them"));
  if (!buffer_is_hbm(rows.buffer()))
    return fail(nki_error(
        "err_unsupported_memory",
        fmt::format("'{}' indexes HBM rows, but {} is in {}", op, rows.describe(), buffer_name(rows.buffer())),
        "use indirect indices on an HBM tensor's first dimension"));
  if (auto r = check_tiles(ctx, {&tile}, op); !r) return r;
  if (auto r = check_index_tile(index, tile.partitions(), op); !r) return r;
  if (index.view.numel() != index.partitions())
    return fail(
        nki_error("nkia_indirect_index_tile",
                  fmt::format("'{}' index {} must hold one row number per partition ([P, 1])", op, index.describe()),
                  "index with a [P, 1] tile of row numbers"));
  const int64_t row_elems = rows.view.ndim() ? rows.view.numel() / std::max<int64_t>(rows.view.shape()[0], 1) : 0;
  if (per_partition(tile) != row_elems)
    return fail(nki_error(
        "err_store_dst_shape_smaller_than_other_shape",
        fmt::format("'{}' moves rows of {} elements of {} against {}", op, row_elems, rows.describe(), tile.describe()),
        "give the tile one row per partition"));
  const Access& dst = gather ? tile : rows;
  const Access& src = gather ? rows : tile;
  // A gather reads only the rows the index selects: the table is not checked for unwritten rows.
  // A scatter writes only the rows the index selects, of a destination marked written whole.
  settle(*src.tensor);
  settle(*dst.tensor);
  const InstrOp code = rmw ? InstrOp(Opcode::kDmaCopy, *rmw) : InstrOp(Opcode::kDmaCopy);
  InstructionRecord rec =
      rmw ? issue_instruction(ctx, Engine::kDma, code, loc, dst, {&index, &dst}, DataFlow::kCombined)
          : issue_instruction(ctx, Engine::kDma, code, loc, dst, {&index},
                              gather ? DataFlow::kElementwise : DataFlow::kCombined);
  rec.operands.insert(rec.operands.begin() + std::min<ptrdiff_t>(1, std::ssize(rec.operands)),
                      record_operand(src, false));
  if (!gather) warn_unwritten_read(ctx, opcode_name(Opcode::kDmaCopy), loc, src);
  rec.elements = tile.view.numel();
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  const std::vector<int64_t> idx = index.view.contiguous().to_i64_vector();
  const int64_t nrows = rows.view.shape()[0];
  for (int64_t p = 0; p < tile.partitions(); ++p) {
    const int64_t row = idx[static_cast<size_t>(p)];
    if (row < 0 || row >= nrows) {
      if (skip_oob) continue;
      return fail(row_out_of_bounds(op, fmt::format("partition {}", p), row, rows));
    }
    Tensor hbm_row = rows.view.select(0, row);
    Tensor tile_row = tile.view.select(0, p);
    Tensor& to = gather ? tile_row : hbm_row;
    const Tensor from = (gather ? hbm_row : tile_row).reshape(to.shape());
    if (rmw)
      to.assign(binary(BinaryOp::kAdd, to.astype(DType::kFloat32), from, to.dtype()));
    else
      to.assign(from);
  }
  return {};
}

Result<void> isa_dma_transpose_gather(ExecContext& ctx, const Access& dst, const Access& rows, const Access& index,
                                      bool skip_oob, const SourceLoc& loc) {
  constexpr const char* kOp = "dma_transpose (indirect gather)";
  if (!buffer_is_hbm(rows.buffer()) || rows.view.ndim() != 2)
    return fail(nki_error("nkia_dma_transpose_layout",
                          fmt::format("'{}' gathers rows of a 2-D HBM access, not {}", kOp, rows.describe()),
                          "call .ap(pattern=[[row, R], [1, E]], vector_offset=idx, indirect_dim=0) on the HBM tensor"));
  if (index.buffer() != Buffer::kSbuf || (index.dtype() != DType::kInt32 && index.dtype() != DType::kUInt32) ||
      index.view.ndim() != 2 || (index.shape()[1] != 1 && index.shape()[0] != 128))
    return fail(nki_error(
        "nkia_indirect_index_tile",
        fmt::format("'{}' index {} must be an int32 or uint32 SBUF tile of [R, 1] or [128, N]", kOp, index.describe()),
        "load the row numbers into an SBUF tile of shape [R, 1], or [128, N] for more than 128"));
  const int64_t n_rows = index.view.numel(), elems = rows.view.shape()[1];
  if (auto r = check_dma_transpose_elements(rows, kOp); !r) return r;
  if (dst.buffer() != Buffer::kSbuf)
    return fail(nki_error("err_unsupported_memory",
                          fmt::format("'{}' writes SBUF, not {}", kOp, buffer_name(dst.buffer())),
                          "transpose into an nl.sbuf tile"));
  if (auto r = check_partition_limit(ctx, dst, kOp); !r) return r;
  if (dst.shape() != Shape{elems, n_rows} || dst.dtype() != rows.dtype())
    return fail(nki_error("nkia_dma_transpose_layout",
                          fmt::format("'{}' of {} rows of {} gives {} [{}, {}], but the destination is {}", kOp, n_rows,
                                      rows.describe(), dtype_name(rows.dtype()), elems, n_rows, dst.describe()),
                          "allocate the destination as [elements per row, rows gathered] in the source's dtype"));
  settle(*rows.tensor);
  InstructionRecord rec = issue_instruction(ctx, Engine::kDma, Opcode::kDmaTranspose, loc, dst, {&index});
  rec.operands.insert(rec.operands.begin() + std::min<ptrdiff_t>(1, std::ssize(rec.operands)),
                      record_operand(rows, false));
  rec.elements = dst.view.numel();
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};
  // index_flat[r] = index[r % P, r / P]: the tile read column by column.
  const int64_t p = index.shape()[0];
  const std::vector<int64_t> idx = index.view.contiguous().to_i64_vector();
  const int64_t table_rows = rows.view.shape()[0];
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t row = idx[static_cast<size_t>((r % p) * (n_rows / p) + r / p)];
    if (row < 0 || row >= table_rows) {
      if (skip_oob) continue;
      return fail(row_out_of_bounds(kOp, fmt::format("index {}", r), row, rows));
    }
    Tensor column = dst.view.select(1, r);
    column.assign(rows.view.select(0, row));
  }
  return {};
}

Result<void> isa_local_gather(ExecContext& ctx, const Access& dst, const Access& src, const Access& index,
                              int64_t num_elem_per_idx, std::optional<int64_t> num_valid_indices,
                              const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kLocalGather;
  constexpr const char* kOp = opcode_name(kCode);
  const int64_t group = ctx.target->gpsimd_partition_group;  // partitions per GpSimd core
  if (auto r = check_tiles(ctx, {&dst, &src, &index}, kOp, Engine::kGpSimd); !r) return r;
  if (auto r = check_same_partitions(index, src, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  const int64_t p = src.partitions(), k = num_elem_per_idx;
  auto layout = [&](std::string message) {
    return fail(nki_error("nkia_local_gather_layout", std::move(message),
                          fmt::format("load the indices as uint16 (nl.load(idx, dtype=nl.uint16)), span a multiple "
                                      "of {} partitions, and gather 1, 2, 4, 8, 16 or 32 elements per index",
                                      group)));
  };
  if (index.dtype() != DType::kUInt16)
    return layout(
        fmt::format("'{}' reads uint16 indices, but index {} is {}", kOp, index.describe(), dtype_name(index.dtype())));
  if (p % group != 0)
    return layout(
        fmt::format("'{}' gathers within groups of {} partitions, but {} spans {}", kOp, group, src.describe(), p));
  if (k != 1 && k != 2 && k != 4 && k != 8 && k != 16 && k != 32)
    return layout(fmt::format("'{}' num_elem_per_idx must be 1, 2, 4, 8, 16 or 32, not {}", kOp, k));
  const int64_t per_group = group * per_partition(index);  // the indices a group holds
  const int64_t n = num_valid_indices.value_or(per_group);
  if (n < 0 || n > per_group)
    return layout(fmt::format("'{}' num_valid_indices is {}, but each {}-partition group of index {} holds {}", kOp, n,
                              group, index.describe(), per_group));
  const int64_t most = ctx.target->gpsimd_gather_max_indices;
  if (n > most)
    return fail(nki_error(
        "err_size_of_dimension_exceed_arch_limit",
        fmt::format("'{}' uses {} indices per {}-partition group, more than the limit of {}", kOp, n, group, most),
        fmt::format("split the gather into several local_gather calls of at most {} indices each", most)));
  if (dst.dtype() != src.dtype())
    return fail(nki_error("nkia_bad_operand",
                          fmt::format("'{}' copies without conversion, but the destination {} and the source {} "
                                      "differ in dtype",
                                      kOp, dst.describe(), src.describe()),
                          "give the destination the source's dtype and convert afterwards with nl.copy"));
  if (per_partition(dst) != n * k)
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' gathers {} x {} elements per partition, but the destination is {}", kOp, n,
                                      k, dst.describe()),
                          fmt::format("give the destination [P, {}, {}]", n, k)));
  ctx.trace.add(issue_instruction(ctx, Engine::kGpSimd, kCode, loc, dst, {&src, &index}));
  if (!ctx.compute) return {};
  const int64_t f = per_partition(src), c = per_partition(index);
  const Tensor data = src.view.contiguous();
  const std::vector<int64_t> idx = index.view.contiguous().to_i64_vector();
  Tensor out = Tensor::uninitialized({p, n * k}, src.dtype());
  const int64_t size = data.itemsize();
  const auto* in = static_cast<const uint8_t*>(data.data());
  auto* o = static_cast<uint8_t*>(out.data());
  for (int64_t g = 0; g < p / group; ++g)
    for (int64_t j = 0; j < n; ++j) {
      // Partition first: the j-th index of the group is row j % group of column j / group.
      const int64_t at = idx[static_cast<size_t>((g * group + j % group) * c + j / group)];
      if (at + k > f)
        return fail(nki_error("nkia_indirect_index_out_of_bounds",
                              fmt::format("'{}': index {} (partitions {}..{}) reads elements {}..{} of partitions "
                                          "holding {}",
                                          kOp, at, g * group, g * group + group - 1, at, at + k - 1, f),
                              "keep every index + num_elem_per_idx within the source's elements per partition (index "
                              "values are element offsets: logical index * num_elem_per_idx)"));
      for (int64_t r = g * group; r < (g + 1) * group; ++r)
        std::memcpy(o + (r * n * k + j * k) * size, in + (r * f + at) * size, static_cast<size_t>(k * size));
    }
  Tensor d = dst.view;
  d.assign(out.reshape(dst.shape()));
  return {};
}

Result<void> isa_sequence_bounds(ExecContext& ctx, const Access& dst, const Access& segment_ids, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kSequenceBounds;
  constexpr const char* kOp = opcode_name(kCode);
  if (auto r = check_tiles(ctx, {&dst, &segment_ids}, kOp, Engine::kGpSimd); !r) return r;
  for (const Access* a : {&segment_ids, &dst}) {
    if (a->partitions() != 1)
      return fail(
          nki_error("nkia_bad_operand",
                    fmt::format("'{}' works on one partition, but {} spans {}", kOp, a->describe(), a->partitions()),
                    "give segment_ids the shape [1, F] and the destination [1, 2, F]"));
    if (a->dtype() != DType::kFloat32 && a->dtype() != DType::kInt32)
      return fail(nki_error("nkia_bad_operand",
                            fmt::format("'{}' reads and writes float32 or int32, but {} is {}", kOp, a->describe(),
                                        dtype_name(a->dtype())),
                            "load the segment ids as nl.float32 or nl.int32 and give the destination the same"));
  }
  const int64_t f = per_partition(segment_ids);
  if (per_partition(dst) != 2 * f)
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} gives [1, 2, {}], but the destination is {}", kOp,
                                      segment_ids.describe(), f, dst.describe()),
                          fmt::format("allocate the destination as [1, 2, {}]", f)));
  ctx.trace.add(issue_instruction(ctx, Engine::kGpSimd, kCode, loc, dst, {&segment_ids}, DataFlow::kPerPartition));
  if (!ctx.compute) return {};
  // The ids as exact doubles: int32 and float32 values both convert without rounding.
  std::vector<double> ids;
  if (segment_ids.dtype() == DType::kInt32) {
    for (int64_t v : segment_ids.view.contiguous().to_i64_vector()) ids.push_back(static_cast<double>(v));
  } else {
    for (float v : segment_ids.view.contiguous().to_f32_vector()) ids.push_back(v);
  }
  std::vector<int64_t> bounds(static_cast<size_t>(2 * f));
  for (int64_t i = 0; i < f; ++i) {  // starts, left to right
    const size_t at = static_cast<size_t>(i);
    bounds[at] = ids[at] == 0 ? f : (i > 0 && ids[at] == ids[at - 1] ? bounds[at - 1] : i);
  }
  for (int64_t i = f - 1; i >= 0; --i) {  // ends, right to left
    const size_t at = static_cast<size_t>(i), end = static_cast<size_t>(f + i);
    bounds[end] = ids[at] == 0 ? -1 : (i + 1 < f && ids[at] == ids[at + 1] ? bounds[end + 1] : i + 1);
  }
  Tensor out = dst.view;
  out.assign(Tensor::from_i64(dst.shape(), bounds, dst.dtype()));
  return {};
}

Result<void> isa_nonzero_with_count(ExecContext& ctx, const Access& dst, const Access& src, int64_t index_offset,
                                    int64_t padding_val, const SourceLoc& loc) {
  constexpr Opcode kCode = Opcode::kNonzeroWithCount;
  constexpr const char* kOp = opcode_name(kCode);
  constexpr int64_t kGroup = 16;  // partitions per GpSimd core; each core works on its first one
  if (auto r = check_core_version(ctx, 3, kOp, "nonzero_with_count exists on trn2 (NeuronCore-v3) and later"); !r)
    return r;
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp, Engine::kGpSimd); !r) return r;
  if (src.dtype() != DType::kFloat32 && src.dtype() != DType::kInt32)
    return fail(nki_error(
        "nkia_bad_operand",
        fmt::format("'{}' reads float32 or int32, but {} is {}", kOp, src.describe(), dtype_name(src.dtype())),
        "copy the input into a float32 or int32 tile first"));
  if (dst.dtype() != DType::kInt32 && dst.dtype() != DType::kUInt32)
    return fail(nki_error(
        "nkia_bad_operand",
        fmt::format("'{}' writes int32 or uint32 indices, but {} is {}", kOp, dst.describe(), dtype_name(dst.dtype())),
        "allocate the destination as nl.int32"));
  const int64_t t = per_partition(src);
  if (dst.partitions() != src.partitions() || per_partition(dst) != t + 1)
    return fail(
        nki_error("err_store_dst_shape_smaller_than_other_shape",
                  fmt::format("'{}' of {} gives [{}, {}] (the indices and the count), but the destination is {}", kOp,
                              src.describe(), src.partitions(), t + 1, dst.describe()),
                  fmt::format("allocate the destination as [{}, {}]", src.partitions(), t + 1)));
  ctx.trace.add(issue_instruction(ctx, Engine::kGpSimd, kCode, loc, dst, {&src}, DataFlow::kCustom));
  // The partitions it writes hold data from here on; the others keep their flags.
  const int64_t p = src.partitions();
  const int64_t first = (kGroup - dst.start_partition() % kGroup) % kGroup;  // the view's row of partition 16k
  Tensor flags = written_flags(dst);
  const bool tracked = flags.defined();
  if (tracked) {
    flags = flags.contiguous().reshape({p, t + 1});
    auto* f = static_cast<uint8_t*>(flags.data());
    for (int64_t r = first; r < p; r += kGroup) std::fill(f + r * (t + 1), f + (r + 1) * (t + 1), uint8_t{1});
    set_written(dst, flags.reshape(dst.shape()));
  }
  if (!ctx.compute) return {};
  const Tensor in = src.view.contiguous().reshape({p, t});
  std::vector<double> values;
  if (src.dtype() == DType::kInt32) {
    for (int64_t v : in.to_i64_vector()) values.push_back(static_cast<double>(v));
  } else {
    for (float v : in.to_f32_vector()) values.push_back(v);
  }
  Tensor out = dst.view.contiguous().reshape({p, t + 1}).copy();
  std::vector<int64_t> result = out.to_i64_vector();
  for (int64_t r = first; r < p; r += kGroup) {
    int64_t n = 0;
    for (int64_t i = 0; i < t; ++i)
      if (values[static_cast<size_t>(r * t + i)] != 0)
        result[static_cast<size_t>(r * (t + 1) + n++)] = i + index_offset;
    for (int64_t i = n; i < t; ++i) result[static_cast<size_t>(r * (t + 1) + i)] = padding_val;
    result[static_cast<size_t>(r * (t + 1) + t)] = n;
  }
  Tensor d = dst.view;
  d.assign(Tensor::from_i64(dst.shape(), result, dst.dtype()));
  return {};
}

}  // namespace nki_agent
