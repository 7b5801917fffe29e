// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// tests/unit/test_rng.cpp — Philox known answers, pinned streams, statistics, det_log accuracy and
// the tensor fills of tensor/rng.h.
#include "tensor/rng.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

namespace nki_agent {
namespace {

constexpr int kSamples = 1'000'000;
// Statistical checks allow 5 standard errors: with fixed seeds they are deterministic, and a
// correct generator would fail one by chance with probability below 1e-6.
constexpr double kSigmas = 5.0;

// ---- Philox known answers (Random123's kat_vectors for philox4x32_10) -------------------------

TEST(Philox, KnownAnswerZero) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

TEST(Philox, KnownAnswerAllOnes) {
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
}

TEST(Philox, KnownAnswerPi) {
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, StreamLayout) {
  // Block b of (seed, stream) is philox(counter = {b lo, b hi, stream lo, stream hi}, key = seed).
  const uint64_t seed = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull;
  Rng r(seed, stream);
  const PhiloxKey key = {0x89abcdefu, 0x01234567u};
  for (uint32_t b = 0; b < 3; ++b) {
    const PhiloxCounter want = philox4x32_10({b, 0, 0x76543210u, 0xfedcba98u}, key);
    for (uint32_t w : want) EXPECT_EQ(r.next_u32(), w);
  }
}

// ---- golden values: seed 42, stream 0 (recorded from this implementation; they pin the stream) ---

// The batched form gives every block the bits of a call per block: counts that end inside and
// across its lanes, and a run of counters whose low word wraps into the high one.
TEST(Philox, BlocksMatchOneCallPerBlock) {
  const PhiloxKey key = {0x243F6A88u, 0x85A308D3u};
  for (const uint64_t first : {uint64_t{0}, uint64_t{0xFFFFFFF0u}, uint64_t{123456789012345}})
    for (const int64_t count : {int64_t{1}, int64_t{3}, int64_t{64}, int64_t{65}, int64_t{200}}) {
      const uint64_t stream = 0x0123456789ABCDEFull ^ first;
      std::vector<uint32_t> out(static_cast<size_t>(4 * count));
      philox4x32_10_blocks(first, stream, key, count, out.data());
      for (int64_t i = 0; i < count; ++i) {
        const uint64_t b = first + static_cast<uint64_t>(i);
        const PhiloxCounter want = philox4x32_10({static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32),
                                                  static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)},
                                                 key);
        for (int k = 0; k < 4; ++k)
          ASSERT_EQ(out[static_cast<size_t>(4 * i + k)], want[static_cast<size_t>(k)]) << first << " " << i;
      }
    }
}

TEST(RngGolden, U32) {
  Rng r(42);
  const std::array<uint32_t, 8> want = {0x9ceaf053u, 0x77f5493bu, 0x12bf50adu, 0x5742b3d7u,
                                        0xfcdb2127u, 0x53ba6cfdu, 0x838f5a6eu, 0x744e06fbu};
  for (uint32_t w : want) EXPECT_EQ(r.next_u32(), w);
}

TEST(RngGolden, U64IsTwoU32LowFirst) {
  Rng r(42);
  EXPECT_EQ(r.next_u64(), 0x77f5493b9ceaf053ull);
  EXPECT_EQ(r.next_u64(), 0x5742b3d712bf50adull);
  EXPECT_EQ(r.next_u64(), 0x53ba6cfdfcdb2127ull);
  EXPECT_EQ(r.next_u64(), 0x744e06fb838f5a6eull);
}

TEST(RngGolden, Uniform) {
  Rng r(42);
  for (double w : {0x1.dfd524ee73abcp-2, 0x1.5d0acf5c4afd4p-2, 0x1.4ee9b3f7f36c8p-2, 0x1.d1381bee0e3d6p-2})
    EXPECT_EQ(r.uniform(), w);
  Rng f(42);
  for (float w : {0x1.39d5ep-1f, 0x1.dfd524p-2f, 0x1.2bf5p-4f, 0x1.5d0accp-2f}) EXPECT_EQ(f.uniform_f32(), w);
}

TEST(RngGolden, Normal) {
  Rng r(42);
  for (double w : {-0x1.a4cf416d42f64p-2, -0x1.0a7952386200ap+1, -0x1.f5e3d9afd7a85p+0, -0x1.092ac23fd0bf5p-1,
                   0x1.5b508b87d06a7p-1, 0x1.2c18c747e4a19p+0})
    EXPECT_EQ(r.normal(), w);
}

TEST(RngGolden, Integers) {
  Rng r(42);
  for (int64_t w : {3, 1, 7, 7, 3, 5, 4, 1}) EXPECT_EQ(r.integers(0, 10), w);
  Rng big(42);
  for (int64_t w : {580192075859LL, 766076502189LL, -511059054297LL, 633896839790LL})
    EXPECT_EQ(big.integers(-1000000000000LL, 1000000000000LL), w);
}

TEST(RngGolden, NamedStream) {
  Rng r(42, Rng::stream_id("layer0.wq"));
  for (uint32_t w : {0x4e05d86bu, 0xb0025ac2u, 0x13ad0a73u, 0x05d1c849u}) EXPECT_EQ(r.next_u32(), w);
}

TEST(RngStreamId, Fnv1a64KnownValues) {
  // Reference values of FNV-1a 64 (Fowler/Noll/Vo test suite).
  EXPECT_EQ(Rng::stream_id(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Rng::stream_id("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Rng::stream_id("foobar"), 0x85944171f73967e8ull);
  EXPECT_NE(Rng::stream_id("layer0.wq"), Rng::stream_id("layer0.wk"));
}

// ---- independence of streams --------------------------------------------------------------------

std::vector<uint32_t> first_words(Rng r, int n) {
  std::vector<uint32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(r.next_u32());
  return v;
}

TEST(RngStreams, SeedsAndStreamsDiffer) {
  const std::vector<Rng> rngs = {
      Rng(42, 0), Rng(43, 0), Rng(42, 1), Rng(42, uint64_t{1} << 32), Rng(uint64_t{42} | (uint64_t{1} << 32), 0),
      Rng(0, 0)};
  std::vector<std::vector<uint32_t>> seqs;
  for (const Rng& r : rngs) seqs.push_back(first_words(r, 64));
  for (size_t a = 0; a < seqs.size(); ++a)
    for (size_t b = a + 1; b < seqs.size(); ++b) {
      int same = 0;
      for (size_t i = 0; i < 64; ++i) same += seqs[a][i] == seqs[b][i];
      EXPECT_EQ(same, 0) << "streams " << a << " and " << b;
    }
}

TEST(RngStreams, CopyContinuesIdentically) {
  Rng a(7, 3);
  a.next_u32();
  a.normal();  // leaves a spare normal behind
  Rng b = a;
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(a.normal(), b.normal());
    EXPECT_EQ(a.next_u32(), b.next_u32());
  }
  EXPECT_EQ(b.seed(), 7u);
  EXPECT_EQ(b.stream(), 3u);
}

// ---- distributions ------------------------------------------------------------------------------

struct Moments {
  double mean = 0, var = 0, skew = 0, kurt = 0;  // kurt: excess kurtosis
};

Moments moments(const std::vector<double>& x) {
  Moments m;
  const auto n = static_cast<double>(x.size());
  for (double v : x) m.mean += v;
  m.mean /= n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (double v : x) {
    const double d = v - m.mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  m.var = m2;
  m.skew = m3 / std::pow(m2, 1.5);
  m.kurt = m4 / (m2 * m2) - 3.0;
  return m;
}

TEST(RngDistributions, UniformMoments) {
  Rng r(1);
  std::vector<double> x(kSamples);
  for (double& v : x) {
    v = r.uniform();
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
  }
  const Moments m = moments(x);
  const double n = kSamples;
  // Uniform[0,1): mean 1/2, variance 1/12, and Var(sample variance) ~ (mu4 - sigma^4)/n with
  // mu4 = 1/80.
  EXPECT_NEAR(m.mean, 0.5, kSigmas * std::sqrt(1.0 / 12.0 / n));
  EXPECT_NEAR(m.var, 1.0 / 12.0, kSigmas * std::sqrt((1.0 / 80.0 - 1.0 / 144.0) / n));
}

TEST(RngDistributions, UniformF32OnGrid) {
  Rng r(2);
  std::vector<double> x(kSamples);
  for (double& v : x) {
    const float f = r.uniform_f32();
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    ASSERT_EQ(std::ldexp(f, 24), std::floor(std::ldexp(f, 24)));  // a multiple of 2^-24
    v = f;
  }
  const Moments m = moments(x);
  EXPECT_NEAR(m.mean, 0.5, kSigmas * std::sqrt(1.0 / 12.0 / kSamples));
  EXPECT_NEAR(m.var, 1.0 / 12.0, kSigmas * std::sqrt((1.0 / 80.0 - 1.0 / 144.0) / kSamples));
}

TEST(RngDistributions, NormalMoments) {
  Rng r(3);
  std::vector<double> x(kSamples);
  for (double& v : x) v = r.normal();
  const Moments m = moments(x);
  const double n = kSamples;
  // Standard errors of the sample moments of a normal: mean 1/sqrt(n), variance sqrt(2/n),
  // skewness sqrt(6/n), excess kurtosis sqrt(24/n).
  EXPECT_NEAR(m.mean, 0.0, kSigmas * std::sqrt(1.0 / n));
  EXPECT_NEAR(m.var, 1.0, kSigmas * std::sqrt(2.0 / n));
  EXPECT_NEAR(m.skew, 0.0, kSigmas * std::sqrt(6.0 / n));
  EXPECT_NEAR(m.kurt, 0.0, kSigmas * std::sqrt(24.0 / n));
  // Tails: P(|z| > 3) = 0.0026998; binomial standard error.
  int64_t beyond3 = 0;
  for (double v : x) beyond3 += std::fabs(v) > 3.0;
  const double p3 = 0.0026998;
  EXPECT_NEAR(static_cast<double>(beyond3), p3 * n, kSigmas * std::sqrt(n * p3 * (1 - p3)));
}

// Upper quantile of chi-square with k degrees of freedom at a normal deviate z (Wilson-Hilferty).
double chi2_bound(int k, double z) {
  const double a = 2.0 / (9.0 * k);
  return k * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}

// Chi-square statistic of `counts` against equal expected counts.
double chi2_uniform(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expect = static_cast<double>(total) / static_cast<double>(counts.size());
  double chi2 = 0;
  for (int64_t c : counts) chi2 += (c - expect) * (c - expect) / expect;
  return chi2;
}

TEST(RngDistributions, IntegersSmallRangesChiSquare) {
  // Power-of-two and non-power-of-two widths, including negative lows.
  for (auto [low, high] : {std::pair<int64_t, int64_t>{0, 10}, {0, 7}, {-3, 3}, {0, 16}, {100, 101}, {-50, 50}}) {
    Rng r(11);
    std::vector<int64_t> counts(static_cast<size_t>(high - low), 0);
    for (int i = 0; i < kSamples; ++i) {
      const int64_t v = r.integers(low, high);
      ASSERT_GE(v, low);
      ASSERT_LT(v, high);
      ++counts[static_cast<size_t>(v - low)];
    }
    if (counts.size() > 1) {
      EXPECT_LT(chi2_uniform(counts), chi2_bound(static_cast<int>(counts.size()) - 1, kSigmas))
          << "[" << low << ", " << high << ")";
    }
  }
}

TEST(RngDistributions, IntegersNoModuloBias32) {
  // Width 3 * 2^30: reducing a u32 modulo it would make the lowest third twice as likely as the
  // others (probabilities 1/2, 1/4, 1/4). Rejection must give thirds.
  const int64_t third = int64_t{1} << 30;
  Rng r(12);
  std::vector<int64_t> counts(3, 0);
  for (int i = 0; i < kSamples; ++i) {
    const int64_t v = r.integers(0, 3 * third);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 3 * third);
    ++counts[static_cast<size_t>(v / third)];
  }
  EXPECT_LT(chi2_uniform(counts), chi2_bound(2, kSigmas));
}

TEST(RngDistributions, IntegersNoModuloBias64) {
  // The same at 64 bits: [INT64_MIN, 2^62) is 3 * 2^62 wide.
  const int64_t low = std::numeric_limits<int64_t>::min();
  const int64_t high = int64_t{1} << 62;
  Rng r(13);
  std::vector<int64_t> counts(3, 0);
  for (int i = 0; i < kSamples; ++i) {
    const int64_t v = r.integers(low, high);
    ASSERT_LT(v, high);
    ++counts[static_cast<size_t>((static_cast<uint64_t>(v) - static_cast<uint64_t>(low)) >> 62)];
  }
  EXPECT_LT(chi2_uniform(counts), chi2_bound(2, kSigmas));
}

TEST(RngDistributions, IntegersEdgeRanges) {
  Rng r(14);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(r.integers(5, 6), 5);
  // The widest ranges: full int64 less one, and exactly 2^32 and 2^32 + 1.
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(r.integers(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
    const int64_t a = r.integers(0, int64_t{1} << 32);
    EXPECT_TRUE(a >= 0 && a < (int64_t{1} << 32));
    const int64_t b = r.integers(-1, (int64_t{1} << 32));
    EXPECT_TRUE(b >= -1 && b < (int64_t{1} << 32));
  }
  EXPECT_GT(seen.size(), 990u);
  EXPECT_THROW(r.integers(3, 3), std::invalid_argument);
  EXPECT_THROW(r.integers(4, 3), std::invalid_argument);
}

// ---- det_log ------------------------------------------------------------------------------------

// Distance in units in the last place between two finite doubles of the same sign.
int64_t ulp_distance(double a, double b) {
  auto key = [](double x) {
    const auto i = std::bit_cast<int64_t>(x);
    return i < 0 ? std::numeric_limits<int64_t>::min() - i : i;
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

TEST(DetLog, WithinOneUlpOfStdLog) {
  Rng r(21);
  int64_t worst = 0;
  double worst_x = 0;
  auto check = [&](double x) {
    const int64_t d = ulp_distance(det_log(x), std::log(x));
    if (d > worst) {
      worst = d;
      worst_x = x;
    }
  };
  constexpr int kPerRange = 200'000;
  for (int i = 0; i < kPerRange; ++i) {
    check(r.uniform() + 0x1p-60);  // (0, 1): what the polar method uses
    check(std::ldexp(1.0 + r.uniform(), static_cast<int>(r.integers(-1074, 1024))));  // every exponent
    check(1.0 + (r.uniform() - 0.5) * 0x1p-20);                                       // near 1, where log is tiny
    check(0x1.6a09e667f3bcdp-1 + (r.uniform() - 0.5) * 0x1p-8);                       // near the sqrt(2)/2 split
    check(std::ldexp(r.uniform() + 0x1p-53, -1022));                                  // subnormals
  }
  for (double x : {std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max(), 2.0, 0.5, 10.0, 0.1, 1e-300, 1e300})
    check(x);
  EXPECT_LE(worst, 1) << "worst at " << worst_x;
}

TEST(DetLog, SpecialValues) {
  EXPECT_EQ(det_log(1.0), 0.0);
  EXPECT_EQ(det_log(2.0), 0x1.62e42fefa39efp-1);  // ln 2 correctly rounded
  EXPECT_EQ(det_log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(det_log(-0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(det_log(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(det_log(-1.0)));
  EXPECT_TRUE(std::isnan(det_log(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(det_log(-std::numeric_limits<double>::infinity())));
}

// ---- tensor fills -------------------------------------------------------------------------------

// A view that is transposed, sliced with a step and reversed: not contiguous in any sense.
Tensor awkward_view(Tensor& base) {
  return base.transpose().slice(0, 1, 7, 2).slice(1, Slice{Slice::kNone, Slice::kNone, -1});
}

enum class FillKind { kUniform, kNormal, kIntegers };

void do_fill(Rng& r, Tensor& t, FillKind k) {
  switch (k) {
    case FillKind::kUniform: r.fill_uniform(t, -2.0, 3.0); break;
    case FillKind::kNormal: r.fill_normal(t, 1.0, 0.5); break;
    case FillKind::kIntegers: r.fill_integers(t, -20, 20); break;
  }
}

TEST(RngFill, StridedViewGetsCOrderStream) {
  for (FillKind kind : {FillKind::kUniform, FillKind::kNormal, FillKind::kIntegers}) {
    for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kInt32}) {
      Tensor base = Tensor::full({5, 8}, dt, 99.0);  // a sentinel no fill produces
      Tensor view = awkward_view(base);
      ASSERT_EQ(view.shape(), (Shape{3, 5}));
      ASSERT_FALSE(view.is_contiguous());
      Rng a(31, 5), b(31, 5);
      do_fill(a, view, kind);
      Tensor dense = Tensor::empty(view.shape(), dt);
      do_fill(b, dense, kind);
      // The view holds exactly the contiguous fill, element for element in C order...
      EXPECT_EQ(view.copy().to_f32_vector(), dense.to_f32_vector()) << dtype_name(dt);
      // ...and nothing outside the view was touched.
      int64_t untouched = 0;
      for (float v : base.to_f32_vector()) untouched += v == 99.0f;
      EXPECT_EQ(untouched, base.numel() - view.numel()) << dtype_name(dt);
      // Both generators consumed the same amount.
      EXPECT_EQ(a.next_u32(), b.next_u32());
    }
  }
}

TEST(RngFill, ZeroDimAndEmpty) {
  Rng a(1), b(1);
  Tensor scalar = Tensor::empty({}, DType::kFloat32);
  a.fill_uniform(scalar, 0.0, 1.0);
  EXPECT_EQ(static_cast<float>(scalar.item()), static_cast<float>(b.uniform()));
  Tensor none = Tensor::empty({3, 0}, DType::kFloat32);
  a.fill_normal(none, 0.0, 1.0);  // consumes nothing
  EXPECT_EQ(a.next_u32(), b.next_u32());
}

TEST(RngFill, Bf16ValuesAreRoundedFloat32Fill) {
  Rng a(77), b(77);
  Tensor f = random_normal({64, 33}, DType::kFloat32, a, 0.0, 3.0);
  Tensor h = random_normal({64, 33}, DType::kBFloat16, b, 0.0, 3.0);
  const std::vector<float> fv = f.to_f32_vector(), hv = h.to_f32_vector();
  ASSERT_EQ(fv.size(), hv.size());
  const auto* bits = h.data_as<uint16_t>();
  for (size_t i = 0; i < fv.size(); ++i) {
    EXPECT_EQ(bits[i], bf16_from_f32(fv[i]));
    EXPECT_EQ(bf16_to_f32(bf16_from_f32(hv[i])), hv[i]);  // exactly representable in bf16
  }
}

TEST(RngFill, Fp8AndIntegerTargets) {
  Rng r(5);
  Tensor q = random_uniform({1000}, DType::kFloat8E4M3, r, -4.0, 4.0);
  for (float v : q.to_f32_vector()) {
    EXPECT_EQ(fp8e4m3_to_f32(fp8e4m3_from_f32(v)), v);
    EXPECT_GE(v, -4.0f);
    EXPECT_LE(v, 4.0f);  // rounding may reach the bound
  }
  Tensor i8 = random_integers({4096}, DType::kInt8, r, -128, 128);
  std::set<int64_t> seen;
  for (int64_t v : i8.to_i64_vector()) seen.insert(v);
  EXPECT_EQ(seen.size(), 256u);  // every int8 value, none wrapped away
  Tensor u = random_uniform({2, 3}, DType::kFloat32, r);
  EXPECT_EQ(u.shape(), (Shape{2, 3}));
  EXPECT_EQ(u.dtype(), DType::kFloat32);
  EXPECT_TRUE(u.is_contiguous());
  EXPECT_THROW(random_integers({2}, DType::kInt32, r, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace nki_agent
