// nki/numeric_checks.h — checks on extents and values that guard the numerics of the instructions:
// what the tensor library cannot compute (a max over nothing) is refused with a code before the
// call, and what the hardware computes differently from the simulator (Scalar-engine functions
// outside their valid input range) is warned about.
//
// These functions never compute an instruction's results; they only read shapes and values.
#pragma once

#include <span>

#include "core/diagnostic.h"
#include "nki/isa.h"
#include "tensor/ops.h"

namespace nki_agent {

// nkia_reduce_empty_axis when `op` is max or min and the axes reduced (`axes`; empty: all of them)
// hold no element while there are results to produce: max and min have no identity.
Result<void> check_reduction_has_elements(ReduceOp op, const Access& src, std::span<const int> axes,
                                          const char* instruction);

// nkia_activation_input_out_of_range (a warning into ctx.warnings, at `loc`) when a computing run
// feeds the Scalar engine's `op` float32 inputs `x` outside the range its approximation is valid
// for (nki-spec §4.3: log, sin, arctan, sqrt, rsqrt, reciprocal; every other function is valid
// everywhere). NaN inputs are left to the checks of unwritten memory; 0 is valid for sqrt, sin and
// arctan. The simulator still computes the exact function.
void warn_activation_range(ExecContext& ctx, UnaryOp op, const Tensor& x, const SourceLoc& loc);

}  // namespace nki_agent
