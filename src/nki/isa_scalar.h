// nki/isa_scalar.h — tensor_scalar in full (nki-spec §4.4): one or two operator steps, each with a
// number or a [P, 1] tile operand (or an operator given as a unary function: rsqrt, abs, ...),
// computed in float32 and rounded once into the destination — or, when every step is a bitvec
// operator on integer tiles, computed on the integers' bits (right shifts are logical).
#pragma once

#include <optional>
#include <span>

#include "nki/isa.h"

namespace nki_agent {

struct ScalarStep {
  BinaryOp op = BinaryOp::kAdd;
  std::optional<UnaryOp> unary;  // the step applies this function instead (its operand is ignored)
  double value = 0.0;            // the operand, when no tile is given
  std::optional<Access> tile;    // a [P, 1] operand, one value per partition
  bool reverse = false;          // operand <op> data instead of data <op> operand
};

// dst = (src step0 ...) step1, on the Vector engine.
Result<void> isa_tensor_scalar_ops(ExecContext& ctx, const Access& dst, const Access& src,
                                   std::span<const ScalarStep> steps, const SourceLoc& loc);

// a >> b with the bits of a shifted as unsigned (NKI's right_shift is logical for every type).
Tensor logical_right_shift(const Tensor& a, const Tensor& b);

bool is_bitvec_op(BinaryOp op);

}  // namespace nki_agent
