// Seeded kernel inputs in the verification's distributions (tasks/inputs.h).
#include "tasks/inputs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tensor/rng.h"

namespace nki_agent {

InputProfile profile_for_seed(const Task& task, int index) {
  if (task.profiles.empty()) return InputProfile::kNormal;
  return task.profiles[static_cast<size_t>(index) % task.profiles.size()];
}

namespace {

// Elements a fill draws and transforms at a time (a multiple of 4, Philox's block).
constexpr int64_t kFillBlock = 1024;

// The standard normal quantile by Acklam's rational approximation (relative error < 1.2e-9): plain
// double arithmetic (the build has -ffp-contract=off), det_log and the correctly rounded sqrt only
// in the tails, so every machine draws the same values. One uniform per value: about five times
// faster than the polar method of Rng::normal(), which matters at 10^7 elements per case.
constexpr double kLowTail = 0.02425;

// The central region, |p - 0.5| <= 0.5 - kLowTail: a rational function, no branch.
double central_quantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// The tails, p < kLowTail or p > 1 - kLowTail.
double tail_quantile(double p) {
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  const double q = std::sqrt(-2 * det_log(p < kLowTail ? p : 1 - p));
  const double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
                   ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  return p < kLowTail ? x : -x;
}

// Uniforms to normal quantiles, in place: the central formula over the whole block first (a loop
// the compiler vectorises; the same operations per element as a scalar loop, so the same bits),
// then the few tail elements (about 5%) recomputed one by one.
void normal_quantiles(double* v, int64_t n) {
  double p[kFillBlock];  // the uniforms, kept: the central pass overwrites v
  std::copy(v, v + n, p);
  for (int64_t i = 0; i < n; ++i) v[i] = central_quantile(p[i]);
  for (int64_t i = 0; i < n; ++i)
    if (p[i] < kLowTail || p[i] > 1 - kLowTail) v[i] = tail_quantile(p[i]);
}

// A contiguous float32 tensor of uniforms u in (0, 1) — never 0 or 1: 32 random bits, centred in
// their interval — turned into values by fn(values, count), kFillBlock at a time, in C order. The
// bits come straight from Philox blocks (four elements per block) keyed by the seed, with the
// stream in the counter's high words, as Rng does; one 32-bit draw per element is plenty for test
// inputs and twice as fast as Rng::uniform().
template <typename F>
Tensor fill_f32(const Shape& shape, uint64_t seed, uint64_t stream, F fn) {
  Tensor t = Tensor::uninitialized(shape, DType::kFloat32);
  float* out = t.data_as<float>();
  const int64_t n = t.numel();
  const PhiloxKey key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  double v[kFillBlock];
  uint32_t bits[kFillBlock];
  for (int64_t b0 = 0; b0 < n; b0 += kFillBlock) {
    const int64_t m = std::min(kFillBlock, n - b0);  // b0 is a multiple of 4: blocks start on Philox blocks
    philox4x32_10_blocks(static_cast<uint64_t>(b0 / 4), stream, key, (m + 3) / 4, bits);
    for (int64_t i = 0; i < m; ++i) v[i] = (static_cast<double>(bits[i]) + 0.5) * 0x1p-32;
    fn(v, m);
    for (int64_t i = 0; i < m; ++i) out[b0 + i] = static_cast<float>(v[i]);
  }
  return t;
}

}  // namespace

Tensor generate_input(const TaskArg& arg, const Shape& shape, uint64_t seed, InputProfile profile,
                      std::string_view set_name, double large_scale) {
  std::string stream = arg.name + "/" + std::string(set_name) + "/" + std::string(profile_name(profile));
  const uint64_t stream_id = Rng::stream_id(stream);
  if (arg.dist == Dist::kRandint || !dtype_is_float(arg.dtype)) {
    Rng rng(seed, stream_id);
    int64_t lo = static_cast<int64_t>(arg.low.value_or(0));
    int64_t hi = arg.high ? static_cast<int64_t>(*arg.high) : 2;
    return random_integers(shape, arg.dtype, rng, lo, hi);
  }
  Tensor t;
  if (arg.dist == Dist::kUniform) {
    const double lo = arg.low.value_or(0.0), hi = arg.high.value_or(1.0);
    t = fill_f32(shape, seed, stream_id, [&](double* v, int64_t m) {
      for (int64_t i = 0; i < m; ++i) v[i] = lo + (hi - lo) * v[i];
    });
  } else {
    const bool positive = arg.dist == Dist::kPositive;
    // A positive argument (a variance, what a log or sqrt reads) keeps its sign when negated.
    double scale = 1.0;
    switch (profile) {
      case InputProfile::kLarge: scale = large_scale; break;
      case InputProfile::kNearZero: scale = kNearZeroScale; break;
      case InputProfile::kScaled: scale = kScaledScale; break;
      case InputProfile::kSmall: scale = kSmallScale; break;
      case InputProfile::kNegated: scale = positive ? 1.0 : -1.0; break;
      case InputProfile::kNormal:
      case InputProfile::kUniform: break;
    }
    if (profile == InputProfile::kUniform)
      t = fill_f32(shape, seed, stream_id, [positive](double* v, int64_t m) {
        for (int64_t i = 0; i < m; ++i) v[i] = positive ? 0.05 + v[i] : 2 * v[i] - 1;
      });
    else if (positive)
      t = fill_f32(shape, seed, stream_id, [scale](double* v, int64_t m) {
        normal_quantiles(v, m);
        for (int64_t i = 0; i < m; ++i) v[i] = (std::fabs(v[i]) + 0.05) * scale;
      });
    else
      t = fill_f32(shape, seed, stream_id, [scale](double* v, int64_t m) {
        normal_quantiles(v, m);
        for (int64_t i = 0; i < m; ++i) v[i] = v[i] * scale;
      });
  }
  return arg.dtype == DType::kFloat32 ? t : t.astype(arg.dtype);
}

}  // namespace nki_agent
