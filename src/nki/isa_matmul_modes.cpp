#include "nki/isa_matmul_modes.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/checks.h"

namespace nki_agent {

namespace {

constexpr const char* kOp = "nc_matmul(perf_mode=double_row)";

bool is_fp8(DType t) {
  return t == DType::kFloat8E4M3 || t == DType::kFloat8E5M2;
}

Diagnostic layout_error(std::string message) {
  return nki_error("nkia_matmul_double_row_layout", std::move(message),
                   "lay both operands out as [128, 2, free] (K = 256 split as 128 partitions x 2, zero-padded), "
                   "stationary free <= 128 and moving free <= 512, in float8_e4m3 or float8_e5m2 (e.g. "
                   "nl.copy(t, dtype=nl.float8_e4m3)); or drop perf_mode for an ordinary matmul");
}

}  // namespace

std::optional<MatmulPerfMode> parse_matmul_perf_mode(std::string_view name) {
  if (name.empty() || name == "none") return MatmulPerfMode::kNone;
  if (name == "double_row" || name == "double_row_gen3") return MatmulPerfMode::kDoubleRow;
  return std::nullopt;
}

Result<void> check_matmul_double_row_inputs(const ExecContext& ctx, const Access& stationary, const Access& moving) {
  if (auto r = check_core_version(ctx, 3, kOp,
                                  "run on trn2 (target trn2), or use ordinary matmuls: two nc_matmul calls "
                                  "accumulating into the same PSUM tile, one per half of K");
      !r)
    return r;
  if (auto r = check_matmul_inputs_in_sbuf(stationary, moving, kOp); !r) return r;
  for (const Access* in : {&stationary, &moving}) {
    const Shape& s = in->shape();
    if (s.size() != 3 || s[0] != ctx.target->partitions || s[1] != 2)
      return fail(
          layout_error(fmt::format("'{}' takes [128, 2, free] operands (K = 256 as 128 partitions x 2), "
                                   "got {} for the {}",
                                   kOp, in->describe(), in == &stationary ? "stationary" : "moving")));
  }
  const int64_t m = stationary.shape()[2], n = moving.shape()[2];
  if (m > ctx.target->gemm_stationary_fmax || n > ctx.target->gemm_moving_fmax)
    return fail(
        layout_error(fmt::format("'{}' stationary free size {} (limit {}) or moving free size {} (limit {}) "
                                 "is too large",
                                 kOp, m, ctx.target->gemm_stationary_fmax, n, ctx.target->gemm_moving_fmax)));
  if (!is_fp8(stationary.dtype()) || !is_fp8(moving.dtype()))
    return fail(layout_error(fmt::format("'{}' multiplies FP8 operands only (float8_e4m3, float8_e5m2), got {} and {}",
                                         kOp, stationary.describe(), moving.describe())));
  return {};
}

Result<void> isa_nc_matmul_double_row(ExecContext& ctx, const Access& dst, const Access& stationary,
                                      const Access& moving, Accumulate acc, const SourceLoc& loc) {
  if (auto r = check_matmul_double_row_inputs(ctx, stationary, moving); !r) return r;
  // The PSUM destination obeys the ordinary mode's rules.
  const int64_t m = stationary.shape()[2], n = moving.shape()[2];
  if (auto r = check_matmul_destination(ctx, dst, m, n, kOp, stationary, moving); !r) return r;
  InstructionRecord rec =
      issue_matmul(ctx, {Opcode::kNcMatmul, OpMode::kDoubleRow}, kOp, loc, dst, stationary, moving, acc,
                   /*settle_reads=*/true);
  rec.elements = m * n;
  ctx.trace.add(std::move(rec));
  if (!ctx.compute) return {};

  // [M, N] = sum over the two rows l of stationary[:, l, :].T @ moving[:, l, :], in float32.
  Tensor product = matmul(stationary.view.select(1, 0).transpose(), moving.view.select(1, 0), DType::kFloat32);
  product = binary(BinaryOp::kAdd, product,
                   matmul(stationary.view.select(1, 1).transpose(), moving.view.select(1, 1), DType::kFloat32),
                   DType::kFloat32);
  write_matmul_product(dst, product, acc);
  return {};
}

}  // namespace nki_agent
