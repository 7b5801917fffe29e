// nki/numeric_checks.cpp — checks on extents and values that guard the instructions' numerics
// (nki/numeric_checks.h).
#include "nki/numeric_checks.h"

#include <fmt/format.h>

#include <algorithm>

#include "nki/error_catalogue.h"

namespace nki_agent {

namespace {

// The inputs the Scalar engine's function approximations are valid for (nki-spec §4.3): the
// hardware evaluates piece-wise polynomials without range reduction, so outside the range its
// results are meaningless. Functions not listed are valid everywhere.
struct ActivationRange {
  UnaryOp op;
  double lo, hi;   // the valid magnitudes (symmetric) or values
  bool symmetric;  // valid for ±[lo, hi]
  bool zero_ok;    // 0 is valid too (sqrt(0) is exact on every engine)
};
constexpr double kPi = 3.14159265358979323846;
constexpr ActivationRange kActivationRanges[] = {
    {UnaryOp::kLog, 0x1p-64, 0x1p64, false, false},     {UnaryOp::kSin, -kPi, kPi, false, true},
    {UnaryOp::kArctan, -kPi / 2, kPi / 2, false, true}, {UnaryOp::kSqrt, 0x1p-116, 0x1p118, false, true},
    {UnaryOp::kRsqrt, 0x1p-87, 0x1p97, false, false},   {UnaryOp::kReciprocal, 0x1p-42, 0x1p42, true, false},
};

}  // namespace

Result<void> check_reduction_has_elements(ReduceOp op, const Access& src, std::span<const int> axes,
                                          const char* instruction) {
  if (op != ReduceOp::kMax && op != ReduceOp::kMin) return {};
  int64_t reduced = 1, results = 1;
  for (int ax = 0; ax < src.view.ndim(); ++ax) {
    const bool named = axes.empty() || std::find(axes.begin(), axes.end(), ax) != axes.end();
    (named ? reduced : results) *= src.shape()[static_cast<size_t>(ax)];
  }
  if (reduced != 0 || results == 0) return {};
  return fail(nki_error("nkia_reduce_empty_axis",
                        fmt::format("'{}' takes the {} over an empty axis of {}: there is no element to reduce",
                                    instruction, reduce_op_name(op), src.describe())));
}

void warn_activation_range(ExecContext& ctx, UnaryOp op, const Tensor& x, const SourceLoc& loc) {
  const ActivationRange* range = nullptr;
  for (const ActivationRange& r : kActivationRanges)
    if (r.op == op) range = &r;
  if (range == nullptr) return;
  const Tensor c = x.contiguous();
  const float* v = c.data_as<float>();
  int64_t bad = 0;
  float first = 0;
  for (int64_t i = 0, n = c.numel(); i < n; ++i) {
    const double a = v[i];
    if (a != a || (a == 0 && range->zero_ok)) continue;
    const double m = range->symmetric ? (a < 0 ? -a : a) : a;
    if (m >= range->lo && m <= range->hi) continue;
    if (bad++ == 0) first = v[i];
  }
  if (bad == 0) return;
  const std::string valid = range->symmetric ? fmt::format("±[{:g}, {:g}]", range->lo, range->hi)
                                             : fmt::format("[{:g}, {:g}]", range->lo, range->hi);
  Diagnostic d = nki_error("nkia_activation_input_out_of_range",
                           fmt::format("'activation' computes {} of {} inputs outside its valid range {} (the first: "
                                       "{:g}); on hardware those results are meaningless",
                                       unary_op_name(op), bad, valid, first));
  d.at(loc);
  ctx.warnings.add(std::move(d));
}

}  // namespace nki_agent
