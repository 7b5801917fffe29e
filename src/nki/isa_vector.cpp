// Vector-engine fused elementwise instructions: reciprocal and scalar_tensor_tensor
// (nki/isa_vector.h).
#include "nki/isa_vector.h"

#include <fmt/format.h>

#include <algorithm>

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

Result<void> isa_scalar_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& data, BinaryOp op0,
                                      const ScalarOperand& operand0, bool reverse0, BinaryOp op1, const Access& data1,
                                      bool reverse1, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kScalarTensorTensor);
  if (auto r = check_tiles(ctx, {&dst, &data, &data1}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, data, kOp); !r) return r;
  if (auto r = check_same_partitions(data1, data, kOp); !r) return r;
  if (const std::optional<Access>& t = operand0.tile) {
    if (auto r = check_tiles(ctx, {&*t}, kOp); !r) return r;
    if (t->view.numel() != t->partitions() || t->partitions() != data.partitions())
      return fail(nki_error(
          "nkia_scalar_operand_shape",
          fmt::format("'{}' operand0 {} is not one value per partition of {}", kOp, t->describe(), data.describe()),
          fmt::format("pass a [{}, 1] tile (one value per partition) or a Python number", data.partitions())));
  }
  if (data.buffer() == Buffer::kPsum && data1.buffer() == Buffer::kPsum)
    return fail(nki_error("nkia_both_inputs_in_psum",
                          fmt::format("'{}' reads both {} and {} from PSUM; the Vector engine reads at most one "
                                      "operand from PSUM",
                                      kOp, data.describe(), data1.describe()),
                          "copy one operand to SBUF first (nl.copy or nisa.tensor_copy)"));
  if (data1.view.numel() != data.view.numel() || !same_squeezed(data1.shape(), data.shape()))
    return fail(nki_error("nkia_free_size_mismatch",
                          fmt::format("'{}' pairs the elements of {} and {}, but their shapes differ", kOp,
                                      data.describe(), data1.describe()),
                          "slice operand1 to data's shape; for a [P, 1] operand use nisa.tensor_scalar"));
  if (dst.view.numel() != data.view.numel() || !same_squeezed(dst.shape(), data.shape()))
    return fail(nki_error("err_store_dst_shape_smaller_than_other_shape",
                          fmt::format("'{}' of {} into {}: the shapes differ", kOp, data.describe(), dst.describe()),
                          "write the result into a tile of the operand's shape"));
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
  const Tensor other = as_shape_of(data1.view, data.shape());
  Tensor out = as_shape_of(dst.view, data.shape());
  if (reverse1)
    binary_into(op1, other, tmp, out);
  else
    binary_into(op1, tmp, other, out);
  return {};
}

}  // namespace nki_agent
