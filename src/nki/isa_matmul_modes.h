// nki/isa_matmul_modes.h — nc_matmul's performance modes (`perf_mode=`, nki-spec §4.2).
//
// Double row (NeuronCore-v3 and later, FP8 operands): the Tensor engine contracts over 256 values
// per column, laid out as 128 partitions times a most-major free axis of exactly 2:
//   stationary [128, 2, M <= 128], moving [128, 2, N <= 512] -> PSUM [M, N] (float32)
//   out[i, j] = sum over k < 128, l < 2 of stationary[k, l, i] * moving[k, l, j]
// (einsum "kli,klj->ij", Appendix A), at twice the rate of an ordinary matmul. It is one
// instruction (opcode "nc_matmul:double_row" in the trace, which the cost model prices as an
// ordinary matmul of the same M and N streaming 256 rows). FP8 products are exact in float32 and
// the 256 terms accumulate in float32, as the ordinary mode's 128 do.
#pragma once

#include <string_view>

#include "nki/isa.h"

namespace nki_agent {

enum class MatmulPerfMode : uint8_t { kNone, kDoubleRow };

// "" / "none" -> kNone; "double_row" / "double_row_gen3" -> kDoubleRow; anything else nullopt.
std::optional<MatmulPerfMode> parse_matmul_perf_mode(std::string_view name);

// The operand rules of double-row mode (the target first: nkia_feature_not_on_target on
// NeuronCore-v2; then SBUF inputs, err_unsupported_memory; then the layout and the FP8 dtypes,
// nkia_matmul_double_row_layout), for front ends that allocate the result after them.
Result<void> check_matmul_double_row_inputs(const ExecContext& ctx, const Access& stationary, const Access& moving);

// dst[M, N] (PSUM, float32) = the double-row product of stationary [128, 2, M] and moving
// [128, 2, N], overwriting, accumulating or (kAuto) overwriting each element the first time a
// matmul writes it, like isa_nc_matmul.
Result<void> isa_nc_matmul_double_row(ExecContext& ctx, const Access& dst, const Access& stationary,
                                      const Access& moving, Accumulate acc, const SourceLoc& loc);

}  // namespace nki_agent
