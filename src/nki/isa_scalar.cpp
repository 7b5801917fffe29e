#include "nki/isa_scalar.h"

#include <fmt/format.h>

#include "nki/checks.h"

namespace nki_agent {

bool is_bitvec_op(BinaryOp op) {
  return op == BinaryOp::kBitwiseAnd || op == BinaryOp::kBitwiseOr || op == BinaryOp::kBitwiseXor ||
         op == BinaryOp::kLeftShift || op == BinaryOp::kRightShift;
}

namespace {

std::optional<DType> unsigned_twin(DType t) {
  switch (t) {
    case DType::kInt8: return DType::kUInt8;
    case DType::kInt16: return DType::kUInt16;
    case DType::kInt32: return DType::kUInt32;
    default: return std::nullopt;
  }
}

std::string step_names(std::span<const ScalarStep> steps) {
  std::string s;
  for (const ScalarStep& st : steps) {
    if (!s.empty()) s += ",";
    s += st.unary ? unary_op_name(*st.unary) : binary_op_name(st.op);
  }
  return s;
}

}  // namespace

Tensor logical_right_shift(const Tensor& a, const Tensor& b) {
  const auto u = unsigned_twin(a.dtype());
  if (!u) return binary(BinaryOp::kRightShift, a, b);
  Tensor bits = a.contiguous().view_as(*u);
  return binary(BinaryOp::kRightShift, bits, b, *u).view_as(a.dtype());
}

Result<void> isa_tensor_scalar_ops(ExecContext& ctx, const Access& dst, const Access& src,
                                   std::span<const ScalarStep> steps, const SourceLoc& loc) {
  constexpr const char* kOp = opcode_name(Opcode::kTensorScalar);
  NKIA_ASSERT(!steps.empty() && steps.size() <= 2);
  if (auto r = check_tiles(ctx, {&dst, &src}, kOp); !r) return r;
  if (auto r = check_same_partitions(dst, src, kOp); !r) return r;
  // The same partitions and elements per partition; the free shapes may differ (compute_into).
  if (auto r = check_dst_elements(dst, src, kOp); !r) return r;
  int bitvec = 0;
  for (const ScalarStep& st : steps) {
    if (st.tile) {
      if (auto r = check_tiles(ctx, {&*st.tile}, kOp); !r) return r;
      if (st.tile->view.numel() != st.tile->partitions() || st.tile->partitions() != src.partitions())
        return fail(nki_error(
            "nkia_scalar_operand_shape",
            fmt::format("'{}' operand {} is not one value per partition of {}", kOp, st.tile->describe(),
                        src.describe()),
            fmt::format("pass a [{}, 1] tile (one value per partition) or a Python number", src.partitions())));
    }
    bitvec += st.unary ? *st.unary == UnaryOp::kInvert : is_bitvec_op(st.op);
  }
  const bool int_data = !dtype_is_float(src.dtype()) && !dtype_is_float(dst.dtype());
  if (bitvec != 0 && (bitvec != static_cast<int>(steps.size()) || !int_data))
    return fail(nki_error("nkia_bitvec_op_needs_integer",
                          fmt::format("'{}' with {} on {} into {}: bitvec operators work on the bits of integer "
                                      "tiles, and both steps must then be bitvec",
                                      kOp, step_names(steps), src.describe(), dst.describe()),
                          "use integer tiles (nl.int32, nl.uint8, ...) for bitwise and shift operators, and do "
                          "arithmetic steps in a separate instruction"));
  std::vector<const Access*> reads{&src};
  for (const ScalarStep& st : steps)
    if (st.tile) reads.push_back(&*st.tile);
  InstrOp opcode(Opcode::kTensorScalar);
  for (size_t i = 0; i < steps.size(); ++i)
    opcode.sub[i] = steps[i].unary ? AluOp(*steps[i].unary) : AluOp(steps[i].op);
  ctx.trace.add(issue_instruction(ctx, Engine::kVector, opcode, loc, dst, reads, DataFlow::kElementwise));
  if (!ctx.compute) return {};

  Shape per_partition(static_cast<size_t>(std::max(src.view.ndim(), 1)), 1);
  per_partition[0] = src.partitions();
  const DType work = bitvec ? src.dtype() : DType::kFloat32;
  Tensor x = bitvec ? src.view : src.view.astype(DType::kFloat32);
  for (const ScalarStep& st : steps) {
    if (st.unary) {
      x = unary(*st.unary, x);
      continue;
    }
    Tensor operand = st.tile ? st.tile->view.reshape(per_partition).astype(work) : Tensor::full({}, work, st.value);
    const Tensor& a = st.reverse ? operand : x;
    const Tensor& b = st.reverse ? x : operand;
    x = st.op == BinaryOp::kRightShift ? logical_right_shift(a, b) : binary(st.op, a, b, work);
  }
  compute_into(dst.view, src.shape(), [&](Tensor& out) { out.assign(x); });
  return {};
}

}  // namespace nki_agent
