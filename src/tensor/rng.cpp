// tensor/rng.cpp — Philox4x32-10, the derived distributions, a portable log and the tensor fills.
#include "tensor/rng.h"

#include <algorithm>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tensor/strided.h"

namespace nki_agent {

namespace {

// Philox4x32 constants (Salmon et al., SC'11, section 4.3): round multipliers and the Weyl
// sequence increments of the key schedule (golden ratio and sqrt(3) - 1, as 32-bit fractions).
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;  // the variant the paper recommends (and Random123's default)

// ---- det_log ------------------------------------------------------------------------------------
// ln 2 split so that k * kLn2Hi is exact for every exponent k of a double (kLn2Hi has 21 trailing
// zero bits; |k| <= 1128), and kLn2Lo = ln 2 - kLn2Hi rounded to double (computed in 80-digit
// decimal arithmetic).
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;  // sqrt(2) rounded to double
constexpr double kTwo54 = 0x1p54;                // scales subnormals into the normal range

// Coefficients 2/(2i+1) of the atanh series log((1+s)/(1-s)) = 2s + s*(2/3 s^2 + 2/5 s^4 + ...).
// With the mantissa in [sqrt(2)/2, sqrt(2)), |s| <= 0.1716 and s^2 <= 0.0295: eleven terms bring
// the truncation error below 2^-60 relative to the result.
constexpr int kLogTerms = 11;
constexpr std::array<double, kLogTerms> log_coeffs() {
  std::array<double, kLogTerms> c{};
  for (int i = 0; i < kLogTerms; ++i) c[i] = 2.0 / (2.0 * (i + 1) + 1.0);
  return c;
}
constexpr std::array<double, kLogTerms> kLogCoeffs = log_coeffs();

// Visits the address of every element of the view `t` in C order.
template <typename Fn>
void for_each_element(Tensor& t, Fn&& fn) {
  const int64_t itemsize = t.itemsize();
  for_each_row({&t}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
    auto* row = static_cast<uint8_t*>(p[0]);
    for (int64_t i = 0; i < n; ++i) fn(row + i * st[0] * itemsize);
  });
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  for (int r = 0; r < kPhiloxRounds; ++r) {
    if (r > 0) {
      key[0] += kPhiloxW0;
      key[1] += kPhiloxW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * ctr[0];
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * ctr[2];
    const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

void philox4x32_10_blocks(uint64_t first, uint64_t stream, PhiloxKey key, int64_t count, uint32_t* out) {
  constexpr int64_t kLanes = 64;
  alignas(64) uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int64_t b0 = 0; b0 < count; b0 += kLanes) {
    const int64_t m = std::min(kLanes, count - b0);
    for (int64_t i = 0; i < kLanes; ++i) {
      const uint64_t block = first + static_cast<uint64_t>(b0 + i);
      c0[i] = static_cast<uint32_t>(block);
      c1[i] = static_cast<uint32_t>(block >> 32);
      c2[i] = static_cast<uint32_t>(stream);
      c3[i] = static_cast<uint32_t>(stream >> 32);
    }
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < kPhiloxRounds; ++r) {
      if (r > 0) {
        k0 += kPhiloxW0;
        k1 += kPhiloxW1;
      }
      for (int64_t i = 0; i < kLanes; ++i) {
        const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0[i];
        const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2[i];
        const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
        const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
        const uint32_t n0 = hi1 ^ c1[i] ^ k0, n2 = hi0 ^ c3[i] ^ k1;
        c0[i] = n0;
        c1[i] = lo1;
        c2[i] = n2;
        c3[i] = lo0;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      uint32_t* o = out + 4 * (b0 + i);
      o[0] = c0[i];
      o[1] = c1[i];
      o[2] = c2[i];
      o[3] = c3[i];
    }
  }
}

double det_log(double x) {
  if (std::isnan(x) || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int k = 0;
  if (x < std::numeric_limits<double>::min()) {  // subnormal: scale up exactly
    x *= kTwo54;
    k = -54;
  }
  // x = 2^k * m with m in [1, 2), then moved to [sqrt(2)/2, sqrt(2)) so f = m - 1 is small.
  const auto bits = std::bit_cast<uint64_t>(x);
  k += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m >= kSqrt2) {
    m *= 0.5;  // exact
    ++k;
  }
  // log(1+f) = 2 atanh(s) with s = f/(2+f). Since 2s = f - s*f, log(1+f) = f - s*(f - R) where
  // R = 2/3 s^2 + 2/5 s^4 + ...: f is exact (Sterbenz) and the correction is small, so its
  // rounding errors barely reach the result.
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double poly = kLogCoeffs[kLogTerms - 1];
  for (int i = kLogTerms - 2; i >= 0; --i) poly = kLogCoeffs[static_cast<size_t>(i)] + z * poly;
  const double r = z * poly;
  const double dk = static_cast<double>(k);
  // k*ln2 + f - s*(f - R), adding the small parts first.
  const double corr = s * (f - r) - dk * kLn2Lo;
  return dk * kLn2Hi + (f - corr);
}

// ---- Rng ----------------------------------------------------------------------------------------

Rng::Rng(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}

uint64_t Rng::stream_id(std::string_view name) {
  // FNV-1a 64 (Fowler, Noll, Vo): offset basis and prime from the reference definition.
  constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
  constexpr uint64_t kFnvPrime = 0x100000001b3ull;
  uint64_t h = kFnvOffset;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= kFnvPrime;
  }
  return h;
}

void Rng::refill() {
  const PhiloxCounter ctr = {static_cast<uint32_t>(block_), static_cast<uint32_t>(block_ >> 32),
                             static_cast<uint32_t>(stream_), static_cast<uint32_t>(stream_ >> 32)};
  const PhiloxKey key = {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)};
  buf_ = philox4x32_10(ctr, key);
  ++block_;
  pos_ = 0;
}

uint32_t Rng::next_u32() {
  if (pos_ >= 4) refill();
  return buf_[static_cast<size_t>(pos_++)];
}

uint64_t Rng::next_u64() {
  const uint64_t lo = next_u32();
  const uint64_t hi = next_u32();
  return lo | (hi << 32);
}

double Rng::uniform() {
  constexpr double kTwoM53 = 0x1p-53;
  return static_cast<double>(next_u64() >> 11) * kTwoM53;
}

float Rng::uniform_f32() {
  constexpr float kTwoM24 = 0x1p-24f;
  return static_cast<float>(next_u32() >> 8) * kTwoM24;
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Marsaglia polar method: a point uniform in the unit disc (acceptance pi/4) gives two normals.
  double u, v, s;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double scale = std::sqrt(-2.0 * det_log(s) / s);
  spare_ = v * scale;
  has_spare_ = true;
  return u * scale;
}

int64_t Rng::integers(int64_t low, int64_t high) {
  if (!(low < high))
    throw std::invalid_argument("Rng::integers: empty range [" + std::to_string(low) + ", " + std::to_string(high) +
                                ")");
  // Width of the range as unsigned (wraps correctly even for [INT64_MIN, INT64_MAX)).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  uint64_t x;
  if (range <= (uint64_t{1} << 32)) {
    // Accept draws below the largest multiple of `range` that fits in 2^32, then reduce.
    const uint64_t limit = (uint64_t{1} << 32) - ((uint64_t{1} << 32) % range);
    do x = next_u32();
    while (x >= limit);
  } else {
    // 2^64 mod range, computed without 2^64: (2^64 - range) mod range.
    const uint64_t rem = (0 - range) % range;
    const uint64_t limit = 0 - rem;  // 2^64 - rem (rem > 0 here unless range is a power of two)
    if (rem == 0) {
      x = next_u64();
    } else {
      do x = next_u64();
      while (x >= limit);
    }
  }
  return static_cast<int64_t>(static_cast<uint64_t>(low) + x % range);
}

void Rng::fill_uniform(Tensor& t, double low, double high) {
  const DType dt = t.dtype();
  const double width = high - low;
  for_each_element(t, [&](uint8_t* p) { store_f32(p, dt, f32_from_f64(low + width * uniform())); });
}

void Rng::fill_normal(Tensor& t, double mean, double stddev) {
  const DType dt = t.dtype();
  for_each_element(t, [&](uint8_t* p) { store_f32(p, dt, f32_from_f64(mean + stddev * normal())); });
}

void Rng::fill_integers(Tensor& t, int64_t low, int64_t high) {
  if (!(low < high))
    throw std::invalid_argument("Rng::fill_integers: empty range [" + std::to_string(low) + ", " +
                                std::to_string(high) + ")");
  const DType dt = t.dtype();
  for_each_element(t, [&](uint8_t* p) { store_i64(p, dt, integers(low, high)); });
}

Tensor random_uniform(const Shape& shape, DType dtype, Rng& rng, double low, double high) {
  Tensor t = Tensor::empty(shape, dtype);
  rng.fill_uniform(t, low, high);
  return t;
}

Tensor random_normal(const Shape& shape, DType dtype, Rng& rng, double mean, double stddev) {
  Tensor t = Tensor::empty(shape, dtype);
  rng.fill_normal(t, mean, stddev);
  return t;
}

Tensor random_integers(const Shape& shape, DType dtype, Rng& rng, int64_t low, int64_t high) {
  Tensor t = Tensor::empty(shape, dtype);
  rng.fill_integers(t, low, high);
  return t;
}

}  // namespace nki_agent
