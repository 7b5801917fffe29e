// Vector-engine fused elementwise instructions: reciprocal, scalar_tensor_tensor and
// tensor_scalar_cumulative (nki/isa_vector.h).
#include "nki/isa_vector.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "nki/checks.h"
#include "nki/isa_scalar.h"

namespace nki_agent {

Result<void> isa_reciprocal(ExecContext& ctx, const Access& dst, const Access& data, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kReciprocal);
  if (auto r = check_tiles(ctx, {&dst, &data}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (dst.view.numel() != data.view.numel() || !same_squeezed(dst.shape(), data.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} into {}: the shapes differ", kOp, data.describe(), dst.describe()),
                          "write the result into a tile of the operand's shape"));
  ctx.trace.add(
      issue_instruction(ctx, Engine::kVector, Opcode::kReciprocal, loc, dst, {&data}, DataFlow::kElementwise));
  if (!ctx.compute) return {};
  Tensor out = as_shape_of(dst.view, data.shape());
  unary_into(UnaryOp::kReciprocal, data.view, out);
  return {};
}

Result<void> check_per_partition_operand(const ExecContext& ctx, const ScalarOperand& operand, const Access& data,
                                         const char* name, const char* instruction) {
  const std::optional<Access>& t = operand.tile;
  if (!t) return {};
  if (auto r = check_tiles(ctx, {&*t}, instruction); !r) return r;
  if (t->view.numel() != t->partitions() || t->partitions() != data.partitions())
    return fail(
        nki_error("nkia_scalar_operand_shape",
                  fmt::format("'{}' {} {} is not one value per partition of {}", instruction, name, t->describe(),
                              data.describe()),
                  fmt::format("pass a [{}, 1] tile (one value per partition) or a Python number", data.partitions())));
  return {};
}

Result<void> isa_scalar_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& data, BinaryOp op0,
                                      const ScalarOperand& operand0, bool reverse0, BinaryOp op1, const Access& data1,
                                      bool reverse1, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kScalarTensorTensor);
  if (auto r = check_tiles(ctx, {&dst, &data, &data1}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (auto r = check_same_partitions(data1, data, kOp); !r) return r;
  if (auto r = check_per_partition_operand(ctx, operand0, data, "operand0", kOp); !r) return r;
  if (data.buffer() == Buffer::kPsum && data1.buffer() == Buffer::kPsum)
    return fail(nki_error("nkia_both_inputs_in_psum",
                          fmt::format("'{}' reads both {} and {} from PSUM; the Vector engine reads at most one "
                                      "operand from PSUM",
                                      kOp, data.describe(), data1.describe()),
                          "copy one operand to SBUF first (nl.copy or nisa.tensor_copy)"));
  // The ISA reference's tile-size rule: data, operand1 and dst have the same partitions and the same
  // number of elements per partition (their free shapes may differ).
  if (data1.view.numel() != data.view.numel())
    return fail(nki_error("nkia_free_size_mismatch",
                          fmt::format("'{}' pairs the elements of {} and {}, but they hold different numbers of "
                                      "elements per partition",
                                      kOp, data.describe(), data1.describe()),
                          "slice operand1 to data's size; for a [P, 1] operand use nisa.tensor_scalar"));
  if (auto r = check_dst_elements(dst, data, kOp); !r) return r;
  for (BinaryOp op : {op0, op1})
    if (is_bitvec_op(op))
      return fail(nki_error(
          "nkia_bitvec_op_needs_integer",
          fmt::format("'{}' computes in float32: the bitvec operator {} needs integer tiles", kOp, binary_op_name(op)),
          "do bitwise and shift operators with nisa.tensor_scalar or nisa.tensor_tensor on integer "
          "tiles"));
  std::vector<const Access*> reads{&data};
  if (operand0.tile) reads.push_back(&*operand0.tile);
  reads.push_back(&data1);
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, {Opcode::kScalarTensorTensor, op0, op1}, loc, dst, reads,
                                  DataFlow::kElementwise));
  if (!ctx.compute) return {};
  Tensor scalar;
  if (operand0.tile) {
    Shape per_partition(static_cast<size_t>(std::max(data.view.ndim(), 1)), 1);
    per_partition[0] = data.partitions();
    scalar = operand0.tile->view.reshape(per_partition);
  } else {
    scalar = Tensor::full({}, DType::kFloat32, operand0.value);
  }
  Tensor tmp =
      reverse0 ? binary(op0, scalar, data.view, DType::kFloat32) : binary(op0, data.view, scalar, DType::kFloat32);
  const Tensor other = as_shape_of(data1.view, data.shape());  // a read: a copy where no view fits
  compute_into(dst.view, data.shape(), [&](Tensor& out) {
    if (reverse1)
      binary_into(op1, other, tmp, out);
    else
      binary_into(op1, tmp, other, out);
  });
  return {};
}

namespace {

// A number or [P, 1] tile operand of tensor_scalar_cumulative (imm0, imm1): one float32 per partition.
Result<void> check_imm(const ExecContext& ctx, const ScalarOperand& imm, const Access& src, const char* name,
                       const char* op) {
  if (auto r = check_per_partition_operand(ctx, imm, src, name, op); !r) return r;
  const std::optional<Access>& t = imm.tile;
  if (t && t->dtype() != DType::kFloat32)
    return fail(
        nki_error("nkia_bad_operand",
                  fmt::format("'{}' {} must be float32, but {} is {}", op, name, t->describe(), dtype_name(t->dtype())),
                  "load the operand as nl.float32"));
  return {};
}

std::vector<float> per_partition_values(const ScalarOperand& imm, int64_t partitions) {
  if (imm.tile) return imm.tile->view.contiguous().to_f32_vector();
  return std::vector<float>(static_cast<size_t>(partitions), static_cast<float>(imm.value));
}

// The running value a reset_reduce starts from: op1's identity.
float cumulative_identity(BinaryOp op1) {
  switch (op1) {
    case BinaryOp::kMultiply: return 1.0f;
    case BinaryOp::kMaximum: return -std::numeric_limits<float>::infinity();
    case BinaryOp::kMinimum: return std::numeric_limits<float>::infinity();
    default: return 0.0f;  // add, subtract
  }
}

}  // namespace

Result<void> isa_tensor_scalar_cumulative(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op0,
                                          BinaryOp op1, const ScalarOperand& imm0, const ScalarOperand& imm1,
                                          CumulativeStart start, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kTensorScalarCumulative);
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  for (const Access* a : {&src, &dst})
    if (a->dtype() == DType::kInt32 || a->dtype() == DType::kUInt32)
      return fail(nki_error(
          "nkia_bad_operand",
          fmt::format("'{}' cannot read or write int32 / uint32: {} is {}", kOp, a->describe(), dtype_name(a->dtype())),
          "use a float type (float32, bfloat16, ...) or an 8- or 16-bit integer type"));
  if (dst.view.numel() != src.view.numel() || !same_squeezed(dst.shape(), src.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} into {}: the shapes differ", kOp, src.describe(), dst.describe()),
                          "write the result into a tile of the source's shape"));
  if (op1 != BinaryOp::kAdd && op1 != BinaryOp::kSubtract && op1 != BinaryOp::kMultiply && op1 != BinaryOp::kMaximum &&
      op1 != BinaryOp::kMinimum)
    return fail(nki_error("nkia_unsupported_operator",
                          fmt::format("'{}' accumulates with add, subtract, multiply, maximum or minimum, not {}", kOp,
                                      binary_op_name(op1)),
                          "pass op1=nl.add, nl.subtract, nl.multiply, nl.maximum or nl.minimum"));
  if (is_bitvec_op(op0))
    return fail(nki_error(
        "nkia_unsupported_operator",
        fmt::format("'{}' op0 must be an arithmetic operator, not the bitvec operator {}", kOp, binary_op_name(op0)),
        "pass an arithmetic op0 such as nl.add, nl.multiply or nl.maximum"));
  if (auto r = check_imm(ctx, imm0, src, "imm0", kOp); !r) return r;
  if (auto r = check_imm(ctx, imm1, src, "imm1", kOp); !r) return r;
  const int64_t p = src.partitions(), n = p ? src.view.numel() / p : 0;
  if (start == CumulativeStart::kContinue && ctx.vector_accumulator.size() != static_cast<size_t>(p))
    return fail(nki_error("nkia_bad_operand",
                          ctx.vector_accumulator.empty()
                              ? fmt::format("'{}' with reduce_cmd=reduce continues the accumulator of a preceding "
                                            "tensor_scalar_cumulative, but none ran",
                                            kOp)
                              : fmt::format("'{}' with reduce_cmd=reduce continues an accumulator of {} partitions, "
                                            "but {} spans {}",
                                            kOp, ctx.vector_accumulator.size(), src.describe(), p),
                          "start the first cumulative instruction with reduce_cmd=reset_reduce or load_reduce"));
  std::vector<const Access*> reads{&src};
  if (imm0.tile) reads.push_back(&*imm0.tile);
  if (start == CumulativeStart::kLoad && imm1.tile) reads.push_back(&*imm1.tile);
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, {Opcode::kTensorScalarCumulative, op0, op1}, loc, dst, reads,
                                  DataFlow::kPerPartition));
  if (!ctx.compute) {  // the accumulator's extent, for the checks of a following reduce
    ctx.vector_accumulator.assign(static_cast<size_t>(p), 0.0f);
    return {};
  }
  const std::vector<float> k0 = per_partition_values(imm0, p);
  std::vector<float> reg(static_cast<size_t>(p), cumulative_identity(op1));
  if (start == CumulativeStart::kLoad) reg = per_partition_values(imm1, p);
  if (start == CumulativeStart::kContinue) reg = ctx.vector_accumulator;
  const std::vector<float> x = src.view.contiguous().to_f32_vector();
  std::vector<float> res(x.size());
  for (int64_t i = 0; i < p; ++i) {
    float& acc = reg[static_cast<size_t>(i)];
    for (int64_t j = 0; j < n; ++j) {
      const size_t at = static_cast<size_t>(i * n + j);
      acc = binary_op_f32(op1, binary_op_f32(op0, x[at], k0[static_cast<size_t>(i)]), acc);
      res[at] = acc;
    }
  }
  ctx.vector_accumulator = reg;
  Tensor out = dst.view;
  out.assign(Tensor::from_f32(dst.shape(), res, dst.dtype()));
  return {};
}

}  // namespace nki_agent
