// nki/isa_vector.h — Vector-engine instructions of one element in, one out, fused: nisa.reciprocal
// (1 / x on DVE, more precise than the Scalar engine's activation form, nki-spec §4.4),
// nisa.scalar_tensor_tensor ((data op0 scalar) op1 data1 as one instruction) and
// nisa.tensor_scalar_cumulative (a tensor_scalar step, then a running op1 along each partition). They check, trace
// and compute like the rest of the instruction core (nki/isa.h); nothing here prices them.
#pragma once

#include <optional>

#include "nki/isa.h"

namespace nki_agent {

// dst = 1 / data, elementwise, on the Vector engine: computed in float32 and rounded once into
// dst's type. Not an activation: the Scalar engine's input-range rules do not apply.
Result<void> isa_reciprocal(ExecContext& ctx, const Access& dst, const Access& data, const SourceLoc& loc);

// An operand that is a number or a [P, 1] tile (one value per partition): scalar_tensor_tensor's
// first, and the bindings' scalars and tiles (scale, initial, on_false, ...).
struct ScalarOperand {
  double value = 0.0;
  std::optional<Access> tile;
};

// A ScalarOperand's tile, if it has one, is an on-chip tile of one value per partition of `data`
// (nkia_scalar_operand_shape otherwise); `name` is the operand's parameter in the messages.
Result<void> check_per_partition_operand(const ExecContext& ctx, const ScalarOperand& operand, const Access& data,
                                         const char* name, const char* instruction);

// dst = (data op0 operand0) op1 data1 on the Vector engine, as one instruction: reverse0 computes
// operand0 op0 data, reverse1 data1 op1 (...). data1 has data's shape; the intermediate is float32
// and the result is rounded once into dst's type. Bitvec operators are refused
// (nkia_bitvec_op_needs_integer): the instruction computes in float32.
Result<void> isa_scalar_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& data, BinaryOp op0,
                                      const ScalarOperand& operand0, bool reverse0, BinaryOp op1, const Access& data1,
                                      bool reverse1, const SourceLoc& loc);

// Where tensor_scalar_cumulative's running value starts (its reduce_cmd): reset_reduce (the
// identity of op1: 0 for add and subtract, 1 for multiply, -inf for max, +inf for min), load_reduce
// (imm1), reduce (the accumulator a preceding tensor_scalar_cumulative left, per partition).
enum class CumulativeStart : uint8_t { kReset, kLoad, kContinue };

// nisa.tensor_scalar_cumulative on the Vector engine, as AWS's pseudocode states it: per partition,
// for each free element in order, reg = op1(src op0 imm0, reg) and dst = reg (float32, rounded once
// into dst's type). op1 is add, subtract, multiply, maximum or minimum; op0 an arithmetic operator;
// imm0 and imm1 numbers or [P, 1] float32 tiles. int32 / uint32 operands are refused (the ISA's
// limit). The last value of each partition is kept in ctx.vector_accumulator for a following
// reduce_cmd=reduce.
Result<void> isa_tensor_scalar_cumulative(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op0,
                                          BinaryOp op1, const ScalarOperand& imm0, const ScalarOperand& imm1,
                                          CumulativeStart start, const SourceLoc& loc);

}  // namespace nki_agent
