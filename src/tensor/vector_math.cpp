// The float32 transcendental functions of the engines' arithmetic over whole arrays, evaluated in
// float64 and rounded once into float32: loops the compiler vectorises (no calls, no branches),
// built for three instruction sets and chosen when the program starts (target_clones). Each
// operation is IEEE-exact per element and nothing is contracted into fused multiply-adds (the
// build's -ffp-contract=off), so every build gives the same bits on every machine.
//
// Accuracy: the float64 results are within about 1e-12 relative of the true values, so the float32
// results are correctly rounded but for values within that distance of a rounding boundary. Over
// all 2^32 float32 inputs, against float64 libm rounded once: at most one ulp apart, and at most
// three inputs per function not correctly rounded (measured once for all but gelu_tanh, whose naive
// float64 form 0.5 x (1 + tanh u) cancels below x = -5; tests/unit/test_vector_math.cpp sweeps every
// magnitude, [-40, 40] densely, and the special values, gelu_tanh as x sigmoid(2u)).
#include "tensor/vector_math.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/target_clones.h"

namespace nki_agent {

namespace {

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLog2e = 1.44269504088896340736;
constexpr double kRoundMagic = 0x1.8p52;  // adding it rounds a double below 2^51 to an integer

inline double select(bool c, double a, double b) {
  return c ? a : b;
}

// c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1], by Horner's rule.
template <size_t N>
inline double horner(double x, const double (&c)[N]) {
  double p = c[0];
  for (size_t i = 1; i < N; ++i) p = p * x + c[i];
  return p;
}

// expm1(r) for |r| <= ln2 / 2: the Taylor series to r^11 (the first term left out is below
// 2^-52 of the result).
inline double expm1_reduced(double r) {
  constexpr double kTaylor[] = {1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
                                1.0 / 720.0,      1.0 / 120.0,     1.0 / 24.0,     1.0 / 6.0,     0.5};
  return r + r * r * horner(r, kTaylor);
}

// x = n ln2 + r, |r| <= ln2 / 2, for |x| <= 746 (n in [-1076, 1076]); `two_n` = 2^n when n is within
// [-1022, 1023], the caller's range.
struct Reduced {
  double r;
  double two_n;
  bool zero_n;
};
inline Reduced reduce_ln2(double x) {
  const double t = x * kLog2e + kRoundMagic;
  const double n = t - kRoundMagic;
  Reduced red;
  // ln2 in two parts: n * kLn2Hi is exact for |n| < 2^20.
  red.r = (x - n * 0x1.62e42fefa3800p-1) - n * 0x1.ef35793c76730p-45;
  const auto bits = std::bit_cast<uint64_t>(t);  // n in the low bits, two's complement
  red.two_n = std::bit_cast<double>((bits + 1023) << 52);
  red.zero_n = n == 0.0;
  return red;
}

// exp(x) for x within [-700, 700].
inline double exp_d(double x) {
  const Reduced red = reduce_ln2(x);
  return red.two_n + red.two_n * expm1_reduced(red.r);
}

// expm1(x) for x within [-700, 700]: exactly the reduced series when n = 0, so small x keep their
// relative accuracy.
inline double expm1_d(double x) {
  const Reduced red = reduce_ln2(x);
  const double e = expm1_reduced(red.r);
  return select(red.zero_n, e, (red.two_n - 1.0) + red.two_n * e);
}

// log(1 + f) for 1 + f within [sqrt(1/2), sqrt(2)], given f and 2 + f: 2 atanh(s), s = f / (2 + f),
// |s| <= 0.172, the odd series to s^21.
inline double log1p_reduced(double f, double two_plus_f) {
  constexpr double kOdd[] = {1.0 / 21.0, 1.0 / 19.0, 1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0,
                             1.0 / 11.0, 1.0 / 9.0,  1.0 / 7.0,  1.0 / 5.0,  1.0 / 3.0};
  const double s = f / two_plus_f;
  const double z = s * s;
  return 2.0 * s + 2.0 * s * z * horner(z, kOdd);
}

// u = m 2^e with m in [sqrt(1/2), sqrt(2)), for a positive normal u.
struct Split {
  double m;
  double e;
};
inline Split split_sqrt2(double u) {
  const auto bits = std::bit_cast<uint64_t>(u);
  // The exponent read after taking sqrt(1/2)'s bits off, biased by 1024 to stay unsigned (64-bit
  // lanes have no arithmetic shift or integer conversion before AVX-512).
  const uint64_t k = (bits - 0x3fe6a09e667f3bcdULL + (uint64_t{1} << 62)) >> 52;  // e + 1024
  const uint64_t mbits = bits - ((k - 1024) << 52);
  const double e = (std::bit_cast<double>(k | 0x4330000000000000ULL) - 0x1p52) - 1024.0;
  return {std::bit_cast<double>(mbits), e};
}

// log(u) for a positive normal u; other u are the caller's.
inline double log_d(double u) {
  const Split sp = split_sqrt2(u);
  return sp.e * kLn2 + log1p_reduced(sp.m - 1.0, sp.m + 1.0);
}

// log1p(x) for x > -1 (float32 x): 1 + x rounds to a neighbour of the true sum only below 2^-29,
// where the reduction (e = 0) takes f = x itself.
inline double log1p_d(double x) {
  const double u = 1.0 + x;
  const Split sp = split_sqrt2(u);
  const bool near = sp.e == 0.0;
  const double f = select(near, x, sp.m - 1.0);
  return sp.e * kLn2 + log1p_reduced(f, select(near, 2.0 + x, sp.m + 1.0));
}

inline double clamp(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

inline float nan_or(float x, double y) {
  return x != x ? x : static_cast<float>(y);
}

// The value of x * (something reaching 0) far below zero: -0 (a negative number times an underflowed
// positive one), but the limit +0 at -inf, where the product would be NaN.
inline double negative_tail(double x) {
  return std::isinf(x) ? 0.0 : -0.0;
}

inline double sigmoid_d(double x) {
  return 1.0 / (1.0 + exp_d(-clamp(x, -700.0, 700.0)));
}

// tanh(x) = sign(x) e / (e + 2), e = expm1(2 |x|); tanh(20) is 1 in float64.
inline double tanh_d(double x) {
  const double a = clamp(std::fabs(x), 0.0, 20.0);
  const double e = expm1_d(2.0 * a);
  const double t = e / (e + 2.0);
  return std::copysign(t, x);
}

// log(1 + exp(x)); past 20 the float32 result is x itself.
inline double softplus_d(double x) {
  const double c = clamp(x, -700.0, 20.0);
  return x > 20.0 ? x : log1p_d(exp_d(c));
}

// sin(r) and cos(r) for |r| <= pi/4: the Taylor series to r^15 and r^16 (the first terms left out
// are below 2^-53 of the results).
inline double sin_reduced(double r) {
  constexpr double kTaylor[] = {-1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0,
                                -1.0 / 5040.0,          1.0 / 120.0,        -1.0 / 6.0};
  const double z = r * r;
  return select(r == 0.0, r, r + r * z * horner(z, kTaylor));  // sin(-0) is -0
}
inline double cos_reduced(double r) {
  constexpr double kTaylor[] = {1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0,
                                1.0 / 40320.0,          -1.0 / 720.0,         1.0 / 24.0};
  const double z = r * r;
  return 1.0 - 0.5 * z + z * z * horner(z, kTaylor);
}

// The float32 inputs whose sine and cosine the reduction below serves; larger ones (and the
// infinities) go to libm.
constexpr double kMaxTrigReduced = 0x1p20;

// sin(x + quarter * pi/2) for |x| <= kMaxTrigReduced: x = k pi/2 + r, |r| <= pi/4, with pi/2 in
// three parts of 33 bits (each k * part is exact for |k| < 2^20, and what the three leave of pi/2
// moves r by at most 2^-83), then the series of r in the quadrant's turn: sin, cos, -sin, -cos.
inline double sin_quadrant(double x, uint64_t quarter) {
  const double t = x * 0.63661977236758134308 + kRoundMagic;  // 2/pi
  const double k = t - kRoundMagic;
  const double r = ((x - k * 0x1.921fb54400000p+0) - k * 0x1.0b4611a600000p-34) - k * 0x1.3198a2e000000p-69;
  const uint64_t q = std::bit_cast<uint64_t>(t) + quarter;  // k in the low bits, two's complement
  const double s = sin_reduced(r), c = cos_reduced(r);
  const double v = (q & 1) != 0 ? c : s;
  return (q & 2) != 0 ? -v : v;
}

// sin(x + quarter * pi/2) over an array: the series over the reduced range in one vectorised pass,
// then the rare larger inputs again through float64 libm (`libm`).
template <class Libm>
inline void trig_f32(const float* a, float* o, int64_t n, uint64_t quarter, Libm libm) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = nan_or(a[i], sin_quadrant(clamp(a[i], -kMaxTrigReduced, kMaxTrigReduced), quarter));
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(a[i]) > kMaxTrigReduced) o[i] = static_cast<float>(libm(double{a[i]}));
}

}  // namespace

NKIA_TARGET_CLONES void vexp_f32(const float* a, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = nan_or(a[i], exp_d(clamp(a[i], -200.0, 200.0)));
}

NKIA_TARGET_CLONES void vlog_f32(const float* a, float* o, int64_t n) {
  constexpr double kInf = HUGE_VAL, kNaN = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[i];
    // 0 -> -inf, negative -> NaN, +inf -> +inf; the float64 of a float32 is always normal.
    const double y = log_d(clamp(x, 0x1p-160, 0x1p+130));
    o[i] = nan_or(a[i], x > 0x1p+129 ? kInf : (x == 0.0 ? -kInf : (x < 0.0 ? kNaN : y)));
  }
}

NKIA_TARGET_CLONES void vtanh_f32(const float* a, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = nan_or(a[i], tanh_d(a[i]));
}

NKIA_TARGET_CLONES void vsigmoid_f32(const float* a, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = nan_or(a[i], sigmoid_d(a[i]));
}

NKIA_TARGET_CLONES void vsilu_f32(const float* a, float* o, int64_t n) {
  // x sigmoid(x); the limit 0 at -inf (-inf * 0 would be NaN).
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[i];
    o[i] = nan_or(a[i], x < -700.0 ? negative_tail(x) : x * sigmoid_d(x));
  }
}

NKIA_TARGET_CLONES void vgelu_sigmoid_f32(const float* a, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[i];
    o[i] = nan_or(a[i], x < -400.0 ? negative_tail(x) : x * sigmoid_d(1.702 * x));
  }
}

NKIA_TARGET_CLONES void vgelu_tanh_f32(const float* a, float* o, int64_t n) {
  // 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
  for (int64_t i = 0; i < n; ++i) {
    // No clamp needed: x^3 stays finite in float64, and sigmoid_d clamps its argument; the infinities
    // are their limits.
    const double x = a[i];
    const double u = 0.79788456080286536 * (x + 0.044715 * x * x * x);
    o[i] = nan_or(a[i], std::isinf(x) ? (x > 0 ? x : 0.0) : x * sigmoid_d(2.0 * u));
  }
}

NKIA_TARGET_CLONES void vsoftplus_f32(const float* a, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = nan_or(a[i], softplus_d(a[i]));
}

NKIA_TARGET_CLONES void vmish_f32(const float* a, float* o, int64_t n) {
  // x tanh(softplus(x)); the limit 0 at -inf.
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[i];
    o[i] = nan_or(a[i], x < -700.0 ? negative_tail(x) : x * tanh_d(softplus_d(x)));
  }
}

NKIA_TARGET_CLONES void vsin_f32(const float* a, float* o, int64_t n) {
  trig_f32(a, o, n, 0, [](double x) { return std::sin(x); });
}

NKIA_TARGET_CLONES void vcos_f32(const float* a, float* o, int64_t n) {
  trig_f32(a, o, n, 1, [](double x) { return std::cos(x); });
}

}  // namespace nki_agent
