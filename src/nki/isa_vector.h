// nki/isa_vector.h — Vector-engine instructions of one element in, one out, fused: nisa.reciprocal
// (1 / x on DVE, more precise than the Scalar engine's activation form, nki-spec §4.4) and
// nisa.scalar_tensor_tensor ((data op0 scalar) op1 data1 as one instruction). They check, trace
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

// dst = (data op0 operand0) op1 data1 on the Vector engine, as one instruction: reverse0 computes
// operand0 op0 data, reverse1 data1 op1 (...). data1 has data's shape; the intermediate is float32
// and the result is rounded once into dst's type. Bitvec operators are refused
// (nkia_bitvec_op_needs_integer): the instruction computes in float32.
Result<void> isa_scalar_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& data, BinaryOp op0,
                                      const ScalarOperand& operand0, bool reverse0, BinaryOp op1, const Access& data1,
                                      bool reverse1, const SourceLoc& loc);

}  // namespace nki_agent
