// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// tests/unit/test_dtype.cpp — dtype.h against references that share no code with it: Eigen's and
// Imath's half/bfloat16, NumPy's float16 (tests/oracle/fp16_table.py), and float8 tables and a
// brute-force nearest-value encoder built here from each format's definition.
#include "tensor/dtype.h"

#include <gtest/gtest.h>

#include <Imath/half.h>
#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/python_oracle.h"

namespace nki_agent {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kFltMax = std::numeric_limits<float>::max();

uint32_t bits_of(float x) {
  return std::bit_cast<uint32_t>(x);
}
float float_of(uint32_t b) {
  return std::bit_cast<float>(b);
}

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

std::string describe(float x) {
  std::ostringstream os;
  os.precision(9);
  os << x << " (" << hex(bits_of(x)) << ")";
  return os.str();
}

// Collects mismatches of a sweep and reports the first few, so one bug does not print 65k lines.
class Mismatches {
 public:
  void add(const std::string& what) {
    if (count_++ < kShown) examples_ += "  " + what + "\n";
  }
  int64_t count() const { return count_; }
  std::string report() const { return std::to_string(count_) + " mismatches, first ones:\n" + examples_; }

 private:
  static constexpr int64_t kShown = 10;
  int64_t count_ = 0;
  std::string examples_;
};

#define EXPECT_NO_MISMATCHES(m) EXPECT_EQ((m).count(), 0) << (m).report()

// Midpoint of two adjacent values of a narrow format; exact in float32 for every format here
// (it needs at most 12 significant bits and lies inside float32's range).
float midpoint(double lo, double hi) {
  return static_cast<float>((lo + hi) / 2.0);
}

// ---- NumPy oracle ---------------------------------------------------------------------------------

template <typename T>
void write_raw(const std::string& path, const std::vector<T>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

template <typename T>
std::vector<T> read_raw(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  std::vector<T> v;
  if (!f) return v;
  const auto size = static_cast<size_t>(f.tellg());
  v.resize(size / sizeof(T));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  return v;
}

// NumPy's float16 bits of each value (astype(np.float16)).
std::vector<uint16_t> numpy_fp16_encode(const std::vector<float>& values) {
  testing::ScratchDir dir;
  write_raw(dir.file("in.f32"), values);
  const auto run =
      testing::run_python(testing::oracle_script("fp16_table.py"), {"encode", dir.file("in.f32"), dir.file("out.u16")});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  return read_raw<uint16_t>(dir.file("out.u16"));
}

// ---- type facts and names -------------------------------------------------------------------------

std::vector<DType> all_dtypes() {
  std::vector<DType> v;
  for (int i = 0; i < kNumDTypes; ++i) v.push_back(static_cast<DType>(i));
  return v;
}

// The types that take part in arithmetic: all but the packed MX x4 types, whose four values only
// quantize_mx and nc_matmul_mx read (promotion gives them no meaning).
std::vector<DType> arithmetic_dtypes() {
  std::vector<DType> v;
  for (DType t : all_dtypes())
    if (!dtype_is_packed(t)) v.push_back(t);
  return v;
}

TEST(DTypeFacts, SizesAndKinds) {
  struct Row {
    DType t;
    int size;
    bool is_float, is_int, is_signed;
  };
  const Row rows[] = {
      {DType::kFloat32, 4, true, false, true},
      {DType::kBFloat16, 2, true, false, true},
      {DType::kFloat16, 2, true, false, true},
      {DType::kTFloat32, 4, true, false, true},
      {DType::kFloat8E4M3, 1, true, false, true},
      {DType::kFloat8E4M3FN, 1, true, false, true},
      {DType::kFloat8E5M2, 1, true, false, true},
      {DType::kInt8, 1, false, true, true},
      {DType::kInt16, 2, false, true, true},
      {DType::kInt32, 4, false, true, true},
      {DType::kUInt8, 1, false, true, false},
      {DType::kUInt16, 2, false, true, false},
      {DType::kUInt32, 4, false, true, false},
      {DType::kBool, 1, false, false, false},
      {DType::kFloat8E4M3FNx4, 4, false, false, false},
      {DType::kFloat8E5M2x4, 4, false, false, false},
      {DType::kFloat4E2M1FNx4, 2, false, false, false},
      {DType::kFloat8E8M0, 1, true, false, false},
  };
  ASSERT_EQ(std::size(rows), static_cast<size_t>(kNumDTypes));
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(dtype_name(r.t)));
    EXPECT_EQ(dtype_size(r.t), r.size);
    EXPECT_EQ(dtype_is_float(r.t), r.is_float);
    EXPECT_EQ(dtype_is_int(r.t), r.is_int);
    EXPECT_EQ(dtype_is_signed(r.t), r.is_signed);
  }
}

TEST(DTypeFacts, MaxFinite) {
  EXPECT_EQ(dtype_max_finite(DType::kFloat32), kFltMax);
  EXPECT_EQ(dtype_max_finite(DType::kBFloat16), float_of(0x7F7F0000));  // 3.3895314e38
  EXPECT_EQ(dtype_max_finite(DType::kFloat16), 65504.0f);
  EXPECT_EQ(dtype_max_finite(DType::kTFloat32), float_of(0x7F7FE000));
  EXPECT_EQ(dtype_max_finite(DType::kFloat8E4M3), 240.0f);
  EXPECT_EQ(dtype_max_finite(DType::kFloat8E4M3FN), 448.0f);
  EXPECT_EQ(dtype_max_finite(DType::kFloat8E5M2), 57344.0f);
  EXPECT_EQ(dtype_max_finite(DType::kInt8), 127.0f);
  EXPECT_EQ(dtype_max_finite(DType::kUInt16), 65535.0f);
}

TEST(DTypeNames, CanonicalNamesRoundTrip) {
  std::set<std::string_view> seen;
  for (DType t : all_dtypes()) {
    const std::string_view name = dtype_name(t);
    EXPECT_TRUE(seen.insert(name).second) << "duplicate name " << name;
    const auto parsed = dtype_from_name(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, t) << name;
  }
  EXPECT_EQ(dtype_name(DType::kFloat8E4M3FN), "float8_e4m3fn");
  EXPECT_EQ(dtype_name(DType::kBool), "bool");
}

TEST(DTypeNames, Aliases) {
  const std::pair<const char*, DType> aliases[] = {
      {"float32", DType::kFloat32},
      {"fp32", DType::kFloat32},
      {"float", DType::kFloat32},
      {"f32", DType::kFloat32},
      {"bfloat16", DType::kBFloat16},
      {"bf16", DType::kBFloat16},
      {"float16", DType::kFloat16},
      {"fp16", DType::kFloat16},
      {"half", DType::kFloat16},
      {"f16", DType::kFloat16},
      {"tfloat32", DType::kTFloat32},
      {"tf32", DType::kTFloat32},
      {"float8_e4m3", DType::kFloat8E4M3},
      {"fp8_e4m3", DType::kFloat8E4M3},
      {"e4m3", DType::kFloat8E4M3},
      {"float8_e4m3fn", DType::kFloat8E4M3FN},
      {"fp8_e4m3fn", DType::kFloat8E4M3FN},
      {"e4m3fn", DType::kFloat8E4M3FN},
      {"float8_e5m2", DType::kFloat8E5M2},
      {"fp8_e5m2", DType::kFloat8E5M2},
      {"e5m2", DType::kFloat8E5M2},
      {"int8", DType::kInt8},
      {"int16", DType::kInt16},
      {"int32", DType::kInt32},
      {"int", DType::kInt32},
      {"uint8", DType::kUInt8},
      {"uint16", DType::kUInt16},
      {"uint32", DType::kUInt32},
      {"i8", DType::kInt8},
      {"i16", DType::kInt16},
      {"i32", DType::kInt32},
      {"u8", DType::kUInt8},
      {"u16", DType::kUInt16},
      {"u32", DType::kUInt32},
      {"bool", DType::kBool},
      {"bool_", DType::kBool},
  };
  for (const auto& [name, t] : aliases) {
    const auto parsed = dtype_from_name(name);
    ASSERT_TRUE(parsed.has_value()) << name;
    EXPECT_EQ(*parsed, t) << name;
  }
  for (const char* bad : {"", "float64", "int64", "Float32", "fp8", "bfloat", " int8", "uint"}) {
    EXPECT_FALSE(dtype_from_name(bad).has_value()) << "'" << bad << "'";
  }
}

// ---- bfloat16 ---------------------------------------------------------------------------------------

float eigen_bf16_decode(uint16_t b) {
  return static_cast<float>(Eigen::bfloat16(Eigen::bfloat16_impl::raw_uint16_to_bfloat16(b)));
}
uint16_t eigen_bf16_encode(float x) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(x));
}

bool is_nan_bits16(uint16_t b, uint16_t exp_mask) {
  return (b & exp_mask) == exp_mask && (b & ~exp_mask & 0x7FFF);
}

TEST(BFloat16, EveryPatternDecodesAsEigenAndRoundTrips) {
  Mismatches m;
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float ours = bf16_to_f32(b);
    const float ref = eigen_bf16_decode(b);
    if (bits_of(ours) != bits_of(ref)) m.add("decode " + hex(b) + ": " + describe(ours) + " vs Eigen " + describe(ref));
    if (bits_of(ours) != (i << 16)) m.add("decode " + hex(b) + " is not the top half of float32");
    const uint16_t back = bf16_from_f32(ours);
    if (is_nan_bits16(b, 0x7F80)) {
      if (back != ((b & 0x8000) | 0x7FC0)) m.add("NaN " + hex(b) + " re-encodes as " + hex(back));
    } else if (back != b) {
      m.add("round trip " + hex(b) + " -> " + hex(back));
    }
  }
  EXPECT_NO_MISMATCHES(m);
}

// For each pair of adjacent finite bf16/fp16 magnitudes (code c and c + 1; the code after the
// largest finite is inf, reached by values that round past the maximum), the midpoint must go to the
// even code and its float32 neighbours to the nearer code. Both signs.
struct RoundingCase {
  float x;
  uint16_t expected;
};

std::vector<RoundingCase> adjacent_pair_cases(uint16_t max_code, float (*decode)(uint16_t)) {
  std::vector<RoundingCase> cases;
  for (uint32_t c = 0; c <= max_code; ++c) {
    const double lo = decode(static_cast<uint16_t>(c));
    // Past the largest finite value the next value of an unbounded-exponent format is lo + ulp.
    const double hi = c < max_code ? static_cast<double>(decode(static_cast<uint16_t>(c + 1)))
                                   : lo + (lo - decode(static_cast<uint16_t>(c - 1)));
    const float mid = midpoint(lo, hi);
    const auto even = static_cast<uint16_t>((c & 1) == 0 ? c : c + 1);
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      cases.push_back({s * mid, static_cast<uint16_t>(sign | even)});
      cases.push_back({s * std::nextafter(mid, kInf), static_cast<uint16_t>(sign | (c + 1))});
      cases.push_back({s * std::nextafter(mid, 0.0f), static_cast<uint16_t>(sign | c)});
      cases.push_back({s * static_cast<float>(lo), static_cast<uint16_t>(sign | c)});
    }
  }
  return cases;
}

TEST(BFloat16, EveryMidpointRoundsToNearestEven) {
  const auto cases = adjacent_pair_cases(0x7F7F, bf16_to_f32);
  ASSERT_EQ(cases.size(), 0x7F80u * 8);
  Mismatches ours, eigen;
  for (const auto& c : cases) {
    const uint16_t got = bf16_from_f32(c.x);
    if (got != c.expected) ours.add(describe(c.x) + " -> " + hex(got) + ", want " + hex(c.expected));
    const uint16_t ref = eigen_bf16_encode(c.x);
    if (ref != c.expected) eigen.add(describe(c.x) + " -> Eigen " + hex(ref) + ", want " + hex(c.expected));
  }
  EXPECT_NO_MISMATCHES(ours);
  EXPECT_NO_MISMATCHES(eigen) << "Eigen 3.4's bfloat16(float) is expected to round to nearest even";
}

TEST(BFloat16, RandomPatternsEncodeAsEigen) {
  // Any float32 pattern, NaNs included: Eigen also gives 0x7FC0 / 0xFFC0 for NaN.
  std::mt19937 rng(7);
  Mismatches m;
  for (int i = 0; i < 200000; ++i) {
    const float x = float_of(static_cast<uint32_t>(rng()));
    const uint16_t got = bf16_from_f32(x);
    const uint16_t ref = eigen_bf16_encode(x);
    if (got != ref) m.add(describe(x) + " -> " + hex(got) + ", Eigen " + hex(ref));
  }
  EXPECT_NO_MISMATCHES(m);
}

TEST(BFloat16, Specials) {
  EXPECT_EQ(bf16_from_f32(0.0f), 0x0000);
  EXPECT_EQ(bf16_from_f32(-0.0f), 0x8000);
  EXPECT_EQ(bf16_from_f32(kInf), 0x7F80);
  EXPECT_EQ(bf16_from_f32(-kInf), 0xFF80);
  EXPECT_EQ(bf16_from_f32(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(bf16_from_f32(float_of(0xFFC00000)), 0xFFC0);
  EXPECT_EQ(bf16_from_f32(float_of(0x7F800001)), 0x7FC0);  // signaling NaN, payload only in low bits
  EXPECT_EQ(bf16_from_f32(float_of(0xFFFFFFFF)), 0xFFC0);  // would carry into the sign if added blindly
  EXPECT_EQ(bf16_from_f32(kFltMax), 0x7F80);               // rounds past the largest bf16
  EXPECT_EQ(bf16_from_f32(-kFltMax), 0xFF80);
  EXPECT_EQ(bf16_from_f32(float_of(0x7F7F7FFF)), 0x7F7F);  // just below the overflow midpoint
  EXPECT_EQ(bf16_from_f32(float_of(0x7F7F8000)), 0x7F80);  // the midpoint: ties to even = inf
  EXPECT_EQ(bf16_from_f32(1.0f), 0x3F80);
  EXPECT_EQ(bf16_from_f32(float_of(0x00000001)), 0x0000);  // float32 subnormals
  EXPECT_EQ(bf16_from_f32(float_of(0x00008000)), 0x0000);  // tie → even (0)
  EXPECT_EQ(bf16_from_f32(float_of(0x00008001)), 0x0001);
  EXPECT_EQ(bf16_from_f32(float_of(0x80018000)), 0x8002);  // tie → even, negative
  EXPECT_EQ(bf16_from_f32(float_of(0x007FFFFF)), 0x0080);  // largest subnormal rounds up to min normal
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7FC0)));
  EXPECT_EQ(bf16_to_f32(0x7F7F), float_of(0x7F7F0000));
}

// ---- float16 ----------------------------------------------------------------------------------------

float imath_decode(uint16_t b) {
  Imath::half h;
  h.setBits(b);
  return static_cast<float>(h);
}
float eigen_half_decode(uint16_t b) {
  return static_cast<float>(Eigen::half(Eigen::half_impl::raw_uint16_to_half(b)));
}
uint16_t eigen_half_encode(float x) {
  return Eigen::numext::bit_cast<uint16_t>(Eigen::half(x));
}
uint16_t imath_encode(float x) {
  return Imath::half(x).bits();
}

TEST(Float16, EveryPatternDecodesAsImathAndEigenAndRoundTrips) {
  Mismatches m;
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float ours = fp16_to_f32(b);
    const float imath = imath_decode(b);
    const float eigen = eigen_half_decode(b);
    if (bits_of(ours) != bits_of(imath)) m.add(hex(b) + ": " + describe(ours) + " vs Imath " + describe(imath));
    if (bits_of(ours) != bits_of(eigen)) m.add(hex(b) + ": " + describe(ours) + " vs Eigen " + describe(eigen));
    const uint16_t back = fp16_from_f32(ours);
    if (is_nan_bits16(b, 0x7C00)) {
      if (back != ((b & 0x8000) | 0x7E00)) m.add("NaN " + hex(b) + " re-encodes as " + hex(back));
    } else if (back != b) {
      m.add("round trip " + hex(b) + " -> " + hex(back));
    }
    float bulk = 0.0f;
    convert_to_f32(&b, DType::kFloat16, &bulk, 1);
    if (bits_of(bulk) != bits_of(ours)) m.add("bulk decode of " + hex(b) + " differs");
  }
  EXPECT_NO_MISMATCHES(m);
}

TEST(Float16, EveryPatternDecodesAsNumPy) {
  testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const auto run = testing::run_python(testing::oracle_script("fp16_table.py"), {"decode", dir.file("table.f32")});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto numpy = read_raw<float>(dir.file("table.f32"));
  ASSERT_EQ(numpy.size(), 1u << 16);
  // The bulk path (table) and the scalar path, on all patterns at once.
  std::vector<uint16_t> all(1u << 16);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> bulk(all.size());
  convert_to_f32(all.data(), DType::kFloat16, bulk.data(), static_cast<int64_t>(all.size()));
  Mismatches m;
  for (uint32_t i = 0; i < all.size(); ++i) {
    // NumPy keeps NaN payloads bit for bit, so every pattern is compared exactly.
    if (bits_of(bulk[i]) != bits_of(numpy[i]))
      m.add(hex(i) + ": " + describe(bulk[i]) + " vs NumPy " + describe(numpy[i]));
    if (bits_of(fp16_to_f32(all[i])) != bits_of(numpy[i])) m.add(hex(i) + ": scalar decode differs from NumPy");
  }
  EXPECT_NO_MISMATCHES(m);
}

TEST(Float16, EveryMidpointRoundsToNearestEvenLikeEigenImathNumPy) {
  auto cases = adjacent_pair_cases(0x7BFF, fp16_to_f32);
  ASSERT_EQ(cases.size(), 0x7C00u * 8);
  // Plus random float32 patterns of every magnitude, checked against the three references.
  std::mt19937 rng(16);
  for (int i = 0; i < 50000; ++i) {
    const float x = float_of(static_cast<uint32_t>(rng()));
    if (!std::isnan(x)) cases.push_back({x, 0});  // expected: NumPy's answer, see below
  }
  for (float x : {0.0f, -0.0f, kInf, -kInf, kFltMax, -kFltMax, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 3e-8f}) {
    cases.push_back({x, 0});
  }
  // NaNs last: NumPy keeps (truncated) payloads, we give the canonical 0x7E00; both keep the sign.
  for (uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF812345u, 0x7FFFFFFFu}) {
    cases.push_back({float_of(nan), static_cast<uint16_t>(((nan >> 16) & 0x8000u) | 0x7E00u)});
  }
  const size_t num_pairs = 0x7C00u * 8;
  std::vector<float> xs;
  for (const auto& c : cases) xs.push_back(c.x);
  const auto numpy = numpy_fp16_encode(xs);
  ASSERT_EQ(numpy.size(), xs.size());
  Mismatches ours, refs;
  for (size_t i = 0; i < cases.size(); ++i) {
    const float x = cases[i].x;
    if (std::isnan(x)) {
      if (fp16_from_f32(x) != cases[i].expected) ours.add(describe(x) + " -> " + hex(fp16_from_f32(x)));
      if (!is_nan_bits16(numpy[i], 0x7C00) || (numpy[i] & 0x8000) != (cases[i].expected & 0x8000)) {
        refs.add(describe(x) + " -> NumPy " + hex(numpy[i]) + ", not a NaN of the same sign");
      }
      continue;
    }
    const uint16_t want = i < num_pairs ? cases[i].expected : numpy[i];
    const uint16_t got = fp16_from_f32(x);
    if (got != want) ours.add(describe(x) + " -> " + hex(got) + ", want " + hex(want));
    if (numpy[i] != want) refs.add(describe(x) + " -> NumPy " + hex(numpy[i]) + ", want " + hex(want));
    if (eigen_half_encode(x) != want) refs.add(describe(x) + " -> Eigen " + hex(eigen_half_encode(x)));
    if (imath_encode(x) != want) refs.add(describe(x) + " -> Imath " + hex(imath_encode(x)));
  }
  EXPECT_NO_MISMATCHES(ours);
  EXPECT_NO_MISMATCHES(refs);
}

TEST(Float16, Specials) {
  EXPECT_EQ(fp16_from_f32(0.0f), 0x0000);
  EXPECT_EQ(fp16_from_f32(-0.0f), 0x8000);
  EXPECT_EQ(fp16_from_f32(kInf), 0x7C00);
  EXPECT_EQ(fp16_from_f32(-kInf), 0xFC00);
  EXPECT_EQ(fp16_from_f32(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(fp16_from_f32(float_of(0xFF800001)), 0xFE00);  // NaN: canonical, sign kept
  EXPECT_EQ(fp16_from_f32(float_of(0x7FFFFFFF)), 0x7E00);
  EXPECT_EQ(fp16_from_f32(65504.0f), 0x7BFF);
  EXPECT_EQ(fp16_from_f32(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(fp16_from_f32(65520.0f), 0x7C00);  // overflow midpoint: ties to even = inf
  EXPECT_EQ(fp16_from_f32(-1e6f), 0xFC00);
  EXPECT_EQ(fp16_from_f32(kFltMax), 0x7C00);
  EXPECT_EQ(fp16_from_f32(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp16_from_f32(std::ldexp(1.0f, -25)), 0x0000);  // half of it: tie → even (0)
  EXPECT_EQ(fp16_from_f32(-std::ldexp(1.0f, -25)), 0x8000);
  EXPECT_EQ(fp16_from_f32(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(fp16_from_f32(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 steps: tie → even (2)
  EXPECT_EQ(fp16_from_f32(float_of(0x00000001)), 0x0000);   // float32 subnormal
  EXPECT_EQ(fp16_from_f32(std::ldexp(1.0f, -14)), 0x0400);  // min normal
  EXPECT_EQ(fp16_from_f32(1.0f), 0x3C00);
  EXPECT_EQ(fp16_from_f32(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie → even
  EXPECT_EQ(fp16_from_f32(1.0f + std::ldexp(3.0f, -11)), 0x3C02);  // tie → even (up)
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(bits_of(fp16_to_f32(0x8000)), 0x80000000u);
}

// ---- float8 -----------------------------------------------------------------------------------------

// A float8 format from its definition alone: field widths, bias, and which codes are special.
struct Fp8Spec {
  const char* name;
  DType dtype;
  int exp_bits;
  int man_bits;
  int bias;
  bool ieee_specials;  // exponent all ones = inf (mantissa 0) / NaN; else only S.1111.111 is NaN
  uint8_t canonical_nan;
  uint8_t (*encode)(float, Fp8Overflow);
  float (*decode)(uint8_t);
};

const Fp8Spec kFp8Specs[] = {
    {"float8_e4m3", DType::kFloat8E4M3, 4, 3, 7, true, 0x7F, fp8e4m3_from_f32, fp8e4m3_to_f32},
    {"float8_e4m3fn", DType::kFloat8E4M3FN, 4, 3, 7, false, 0x7F, fp8e4m3fn_from_f32, fp8e4m3fn_to_f32},
    {"float8_e5m2", DType::kFloat8E5M2, 5, 2, 15, true, 0x7E, fp8e5m2_from_f32, fp8e5m2_to_f32},
};

// value = (-1)^s · 2^(e - bias) · (1 + m / 2^M), or 2^(1 - bias) · m / 2^M when e = 0.
double fp8_formula(const Fp8Spec& f, int code) {
  const int s = code >> 7;
  const int e = (code >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int m = code & ((1 << f.man_bits) - 1);
  const int e_max = (1 << f.exp_bits) - 1;
  double v;
  if (f.ieee_specials && e == e_max) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.ieee_specials && e == e_max && m == (1 << f.man_bits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
  } else {
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f.man_bits), e - f.bias);
  }
  return s ? -v : v;
}

struct Fp8Reference {
  std::array<double, 256> value{};
  int max_code = 0;       // largest finite magnitude code
  double beyond_max = 0;  // the value after the max in an unbounded-exponent format
  int overflow_code = 0;  // non-saturating overflow: inf, or NaN when the format has no inf
};

Fp8Reference make_reference(const Fp8Spec& f) {
  Fp8Reference r;
  for (int c = 0; c < 256; ++c) r.value[c] = fp8_formula(f, c);
  for (int c = 0; c < 128; ++c) {
    if (std::isfinite(r.value[c])) r.max_code = c;
  }
  r.beyond_max = r.value[r.max_code] + (r.value[r.max_code] - r.value[r.max_code - 1]);
  r.overflow_code = f.ieee_specials ? ((1 << f.exp_bits) - 1) << f.man_bits : f.canonical_nan;
  return r;
}

// The encoder by brute force: the nearest finite magnitude (ties to the even code), where a value
// nearer to beyond_max (or past it) overflows.
uint8_t fp8_brute_force(const Fp8Spec& f, const Fp8Reference& r, float x, Fp8Overflow ovf) {
  const int sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return static_cast<uint8_t>(sign | f.canonical_nan);
  const double mag = std::fabs(static_cast<double>(x));
  const int overflow = ovf == Fp8Overflow::kSaturating ? r.max_code : r.overflow_code;
  if (mag >= r.beyond_max) return static_cast<uint8_t>(sign | overflow);
  int best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = 0; c <= r.max_code + 1; ++c) {
    const double v = c <= r.max_code ? r.value[c] : r.beyond_max;
    const double err = std::fabs(mag - v);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  if (best > r.max_code) return static_cast<uint8_t>(sign | overflow);
  return static_cast<uint8_t>(sign | best);
}

TEST(Float8, EveryCodeDecodesAsTheFormatDefinition) {
  for (const Fp8Spec& f : kFp8Specs) {
    SCOPED_TRACE(f.name);
    const Fp8Reference r = make_reference(f);
    Mismatches m;
    for (int c = 0; c < 256; ++c) {
      const float got = f.decode(static_cast<uint8_t>(c));
      const double want = r.value[c];
      float bulk = 0.0f;
      const auto code = static_cast<uint8_t>(c);
      convert_to_f32(&code, f.dtype, &bulk, 1);
      if (bits_of(bulk) != bits_of(got)) m.add("bulk decode of " + hex(c) + " differs");
      if (std::isnan(want)) {
        if (!std::isnan(got) || std::signbit(got) != std::signbit(want)) m.add(hex(c) + " should be NaN");
      } else if (static_cast<double>(got) != want || std::signbit(got) != std::signbit(want)) {
        m.add(hex(c) + ": " + describe(got) + ", want " + std::to_string(want));
      }
    }
    EXPECT_NO_MISMATCHES(m);
  }
}

TEST(Float8, FormatFactsFromTheDefinition) {
  const Fp8Reference e4m3 = make_reference(kFp8Specs[0]);
  const Fp8Reference e4m3fn = make_reference(kFp8Specs[1]);
  const Fp8Reference e5m2 = make_reference(kFp8Specs[2]);
  EXPECT_EQ(e4m3.value[e4m3.max_code], 240.0);
  EXPECT_EQ(e4m3fn.value[e4m3fn.max_code], 448.0);
  EXPECT_EQ(e5m2.value[e5m2.max_code], 57344.0);
  EXPECT_EQ(e4m3.value[1], std::ldexp(1.0, -9));
  EXPECT_EQ(e5m2.value[1], std::ldexp(1.0, -16));
  for (const Fp8Spec& f : kFp8Specs) {
    EXPECT_EQ(static_cast<double>(dtype_max_finite(f.dtype)), make_reference(f).value[make_reference(f).max_code]);
  }
}

std::vector<float> fp8_test_points(const Fp8Spec& f, const Fp8Reference& r, uint32_t seed) {
  std::vector<float> xs;
  auto add_with_neighbours = [&xs](float x) {
    xs.push_back(x);
    xs.push_back(std::nextafter(x, kInf));
    xs.push_back(std::nextafter(x, -kInf));
  };
  for (int c = 0; c <= r.max_code; ++c) add_with_neighbours(static_cast<float>(r.value[c]));
  for (int c = 0; c <= r.max_code; ++c) {
    const double hi = c < r.max_code ? r.value[c + 1] : r.beyond_max;
    add_with_neighbours(midpoint(r.value[c], hi));
  }
  add_with_neighbours(static_cast<float>(r.beyond_max));
  for (float x :
       {kInf, kFltMax, 1e10f, 65536.0f, 1e6f, float_of(0x00000001), float_of(0x007FFFFF), std::ldexp(1.0f, -30), 0.0f,
        std::numeric_limits<float>::quiet_NaN(), float_of(0x7F800001), float_of(0x7FFFFFFF)}) {
    xs.push_back(x);
  }
  // Random magnitudes across the format's range and beyond, with random low bits.
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> exponent(-f.bias - f.man_bits - 4, (1 << f.exp_bits) - f.bias + 2);
  for (int i = 0; i < 20000; ++i) {
    const auto e = static_cast<uint32_t>(exponent(rng) + 127);
    xs.push_back(float_of((e << 23) | (static_cast<uint32_t>(rng()) & 0x7FFFFF)));
  }
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  return xs;
}

TEST(Float8, EncodeMatchesBruteForceNearestInBothOverflowModes) {
  for (const Fp8Spec& f : kFp8Specs) {
    const Fp8Reference r = make_reference(f);
    const std::vector<float> xs = fp8_test_points(f, r, 8);
    for (Fp8Overflow ovf : {Fp8Overflow::kNonSaturating, Fp8Overflow::kSaturating}) {
      SCOPED_TRACE(std::string(f.name) + (ovf == Fp8Overflow::kSaturating ? " saturating" : " non-saturating"));
      Mismatches m;
      std::vector<uint8_t> bulk(xs.size());
      convert_from_f32(xs.data(), bulk.data(), f.dtype, static_cast<int64_t>(xs.size()), ovf);
      for (size_t i = 0; i < xs.size(); ++i) {
        const uint8_t want = fp8_brute_force(f, r, xs[i], ovf);
        const uint8_t got = f.encode(xs[i], ovf);
        if (got != want) m.add(describe(xs[i]) + " -> " + hex(got) + ", want " + hex(want));
        if (bulk[i] != want) m.add(describe(xs[i]) + " -> bulk " + hex(bulk[i]) + ", want " + hex(want));
      }
      EXPECT_NO_MISMATCHES(m);
    }
  }
}

TEST(Float8, EveryFiniteCodeRoundTrips) {
  for (const Fp8Spec& f : kFp8Specs) {
    SCOPED_TRACE(f.name);
    for (int c = 0; c < 256; ++c) {
      const float v = f.decode(static_cast<uint8_t>(c));
      const uint8_t back = f.encode(v, Fp8Overflow::kNonSaturating);
      if (std::isnan(v)) {
        EXPECT_EQ(back, (c & 0x80) | f.canonical_nan) << hex(c);
      } else {
        EXPECT_EQ(back, c) << hex(c);
      }
    }
  }
}

TEST(Float8, KnownValues) {
  constexpr auto kSat = Fp8Overflow::kSaturating;
  constexpr auto kNonSat = Fp8Overflow::kNonSaturating;
  // float8_e4m3 (IEEE-style): max 240; 248 is the midpoint to 256 and ties to the even code = inf.
  EXPECT_EQ(fp8e4m3_from_f32(1.0f), 0x38);
  EXPECT_EQ(fp8e4m3_from_f32(240.0f), 0x77);
  EXPECT_EQ(fp8e4m3_from_f32(247.9f), 0x77);
  EXPECT_EQ(fp8e4m3_from_f32(248.0f, kNonSat), 0x78);
  EXPECT_EQ(fp8e4m3_from_f32(248.0f, kSat), 0x77);
  EXPECT_EQ(fp8e4m3_from_f32(-1000.0f, kNonSat), 0xF8);
  EXPECT_EQ(fp8e4m3_from_f32(-1000.0f, kSat), 0xF7);
  EXPECT_EQ(fp8e4m3_from_f32(kInf, kNonSat), 0x78);
  EXPECT_EQ(fp8e4m3_from_f32(-kInf, kSat), 0xF7);
  EXPECT_EQ(fp8e4m3_from_f32(std::numeric_limits<float>::quiet_NaN(), kSat), 0x7F);
  EXPECT_EQ(fp8e4m3_from_f32(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
  EXPECT_EQ(fp8e4m3_from_f32(std::ldexp(1.0f, -9)), 0x01);   // smallest subnormal
  EXPECT_EQ(fp8e4m3_from_f32(std::ldexp(1.0f, -10)), 0x00);  // half of it: tie → 0
  EXPECT_EQ(fp8e4m3_from_f32(-std::ldexp(1.0f, -10)), 0x80);
  EXPECT_EQ(fp8e4m3_from_f32(std::ldexp(3.0f, -10)), 0x02);   // 1.5 steps: tie → even
  EXPECT_EQ(fp8e4m3_from_f32(std::ldexp(15.0f, -10)), 0x08);  // 7.5 steps rounds up to min normal
  EXPECT_EQ(fp8e4m3_from_f32(-0.0f), 0x80);
  EXPECT_EQ(fp8e4m3_to_f32(0x78), kInf);
  EXPECT_EQ(fp8e4m3_to_f32(0xF8), -kInf);
  EXPECT_TRUE(std::isnan(fp8e4m3_to_f32(0x79)));
  EXPECT_EQ(fp8e4m3_to_f32(0x77), 240.0f);
  // float8_e4m3fn (OCP): max 448 = S.1111.110; the next step, 480, would be the NaN code. 464 is the
  // midpoint between 448 (even mantissa) and 480, so it ties down to 448; anything above overflows.
  EXPECT_EQ(fp8e4m3fn_from_f32(448.0f), 0x7E);
  EXPECT_EQ(fp8e4m3fn_from_f32(464.0f, kNonSat), 0x7E);
  EXPECT_EQ(fp8e4m3fn_from_f32(std::nextafter(464.0f, kInf), kNonSat), 0x7F);
  EXPECT_EQ(fp8e4m3fn_from_f32(std::nextafter(464.0f, kInf), kSat), 0x7E);
  EXPECT_EQ(fp8e4m3fn_from_f32(480.0f, kNonSat), 0x7F);
  EXPECT_EQ(fp8e4m3fn_from_f32(-480.0f, kNonSat), 0xFF);
  EXPECT_EQ(fp8e4m3fn_from_f32(-480.0f, kSat), 0xFE);
  EXPECT_EQ(fp8e4m3fn_from_f32(kInf, kNonSat), 0x7F);  // no inf: NaN
  EXPECT_EQ(fp8e4m3fn_from_f32(-kInf, kSat), 0xFE);
  EXPECT_EQ(fp8e4m3fn_from_f32(std::numeric_limits<float>::quiet_NaN(), kSat), 0x7F);
  EXPECT_EQ(fp8e4m3fn_to_f32(0x7E), 448.0f);
  EXPECT_EQ(fp8e4m3fn_to_f32(0x78), 256.0f);  // exponent 15 is an ordinary binade
  EXPECT_TRUE(std::isnan(fp8e4m3fn_to_f32(0x7F)));
  EXPECT_TRUE(std::isnan(fp8e4m3fn_to_f32(0xFF)));
  EXPECT_TRUE(std::signbit(fp8e4m3fn_to_f32(0xFF)));
  // float8_e5m2: max 57344; 61440 is the midpoint to 65536 and ties to the even code = inf.
  EXPECT_EQ(fp8e5m2_from_f32(57344.0f), 0x7B);
  EXPECT_EQ(fp8e5m2_from_f32(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(fp8e5m2_from_f32(61440.0f, kNonSat), 0x7C);
  EXPECT_EQ(fp8e5m2_from_f32(61440.0f, kSat), 0x7B);
  EXPECT_EQ(fp8e5m2_from_f32(-kInf, kNonSat), 0xFC);
  EXPECT_EQ(fp8e5m2_from_f32(kInf, kSat), 0x7B);
  EXPECT_EQ(fp8e5m2_from_f32(std::numeric_limits<float>::quiet_NaN()), 0x7E);
  EXPECT_EQ(fp8e5m2_from_f32(-std::numeric_limits<float>::quiet_NaN(), kSat), 0xFE);
  EXPECT_EQ(fp8e5m2_from_f32(std::ldexp(1.0f, -16)), 0x01);
  EXPECT_EQ(fp8e5m2_from_f32(1.0f), 0x3C);
  EXPECT_EQ(fp8e5m2_to_f32(0x7C), kInf);
  EXPECT_TRUE(std::isnan(fp8e5m2_to_f32(0x7D)));
  // Store through the generic path with both policies.
  uint8_t byte = 0;
  store_f32(&byte, DType::kFloat8E4M3, 300.0f, kSat);
  EXPECT_EQ(byte, 0x77);
  store_f32(&byte, DType::kFloat8E4M3, 300.0f);
  EXPECT_EQ(byte, 0x78);
  EXPECT_EQ(load_f32(&byte, DType::kFloat8E4M3), kInf);
}

// ---- tfloat32 ---------------------------------------------------------------------------------------

// RNE to 11 significant bits by arithmetic in double: the tf32 step at x's binade is
// 2^(exponent - 10), and float32's subnormal binade has the step 2^(-126 - 10).
float tf32_formula(float x) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  int e = 0;
  std::frexp(static_cast<double>(x), &e);  // x = f · 2^e, f in [0.5, 1)
  const int exponent = std::max(e - 1, -126);
  const double step = std::ldexp(1.0, exponent - 10);
  const double r = std::nearbyint(static_cast<double>(x) / step) * step;
  if (std::fabs(r) >= std::ldexp(1.0, 128)) return std::copysign(kInf, x);
  return static_cast<float>(r);  // exact: r has at most 11 significant bits
}

TEST(TFloat32, SpotChecks) {
  EXPECT_EQ(tf32_round(1.0f), 1.0f);
  EXPECT_EQ(tf32_round(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));  // representable
  EXPECT_EQ(tf32_round(1.0f + std::ldexp(1.0f, -11)), 1.0f);                          // tie → even
  EXPECT_EQ(tf32_round(1.0f + std::ldexp(3.0f, -11)), 1.0f + std::ldexp(1.0f, -9));   // tie → even
  EXPECT_EQ(tf32_round(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(bits_of(tf32_round(3.14159265f)), 0x40490000u);  // 0x40490FDB: dropped bits below half
  EXPECT_EQ(bits_of(tf32_round(-0.0f)), 0x80000000u);
  EXPECT_EQ(tf32_round(kInf), kInf);
  EXPECT_EQ(tf32_round(-kInf), -kInf);
  EXPECT_EQ(tf32_round(kFltMax), kInf);  // rounds past the largest tf32
  EXPECT_EQ(bits_of(tf32_round(float_of(0x7F7FEFFF))), 0x7F7FE000u);
  EXPECT_EQ(bits_of(tf32_round(float_of(0x00001000))), 0x00000000u);  // subnormal tie → even
  EXPECT_EQ(bits_of(tf32_round(float_of(0x00003000))), 0x00004000u);
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7F801FFFu}) {
    const float r = tf32_round(float_of(nan));
    EXPECT_TRUE(std::isnan(r)) << hex(nan);
    EXPECT_EQ(std::signbit(r), (nan >> 31) != 0) << hex(nan);
    EXPECT_EQ(bits_of(r) & 0x1FFFu, 0u) << hex(nan);
  }
  EXPECT_EQ(dtype_max_finite(DType::kTFloat32), tf32_round(dtype_max_finite(DType::kTFloat32)));
}

TEST(TFloat32, SweepMatchesFormula) {
  Mismatches m;
  auto check = [&m](uint32_t b) {
    const float x = float_of(b);
    const float got = tf32_round(x);
    if (std::isnan(x)) {
      if (!std::isnan(got) || std::signbit(got) != std::signbit(x)) m.add(describe(x) + " should stay NaN");
      return;
    }
    const float want = tf32_formula(x);
    if (bits_of(got) != bits_of(want)) m.add(describe(x) + " -> " + describe(got) + ", want " + describe(want));
  };
  // A stride through every float32 pattern, and for every exponent the patterns around a tie.
  constexpr uint32_t kStride = 4099;  // prime, so the low bits take every value
  for (uint64_t b = 0; b < (1ull << 32); b += kStride) check(static_cast<uint32_t>(b));
  for (uint32_t sign_exp = 0; sign_exp < 512; ++sign_exp) {
    for (uint32_t high : {0u, 1u, 0x3FFu, 0x2AAu}) {  // the kept mantissa bits (odd and even)
      for (uint32_t low : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu}) {
        check((sign_exp << 23) | (high << 13) | low);
      }
    }
  }
  EXPECT_NO_MISMATCHES(m);
}

TEST(TFloat32, StoredRoundedAndReadRounded) {
  float cell = 0.0f;
  store_f32(&cell, DType::kTFloat32, 1.0f + std::ldexp(3.0f, -11));
  EXPECT_EQ(cell, 1.0f + std::ldexp(1.0f, -9));
  cell = 1.0f + std::ldexp(1.0f, -20);  // raw float32 bits written by someone else
  EXPECT_EQ(load_f32(&cell, DType::kTFloat32), 1.0f);
}

// ---- integers and bool ------------------------------------------------------------------------------

void expect_store(DType t, float v, int64_t want) {
  alignas(8) uint8_t buf[8] = {};
  store_f32(buf, t, v);
  EXPECT_EQ(load_i64(buf, t), want) << dtype_name(t) << " <- " << describe(v);
}

TEST(Integers, StoreF32TruncatesSaturatesAndZeroesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_store(DType::kInt8, 3.7f, 3);
  expect_store(DType::kInt8, -3.7f, -3);
  expect_store(DType::kInt8, 127.9f, 127);
  expect_store(DType::kInt8, 128.0f, 127);
  expect_store(DType::kInt8, -128.9f, -128);
  expect_store(DType::kInt8, -129.0f, -128);
  expect_store(DType::kInt8, 1e10f, 127);
  expect_store(DType::kInt8, -kInf, -128);
  expect_store(DType::kInt8, nan, 0);
  expect_store(DType::kInt16, 32767.5f, 32767);
  expect_store(DType::kInt16, 40000.0f, 32767);
  expect_store(DType::kInt16, -40000.0f, -32768);
  expect_store(DType::kInt16, -nan, 0);
  expect_store(DType::kInt32, 2147483520.0f, 2147483520);  // largest float below 2^31
  expect_store(DType::kInt32, 2147483648.0f, 2147483647);
  expect_store(DType::kInt32, -2147483648.0f, -2147483647 - 1);
  expect_store(DType::kInt32, -3e9f, -2147483647 - 1);
  expect_store(DType::kInt32, kInf, 2147483647);
  expect_store(DType::kInt32, -kInf, -2147483647 - 1);
  expect_store(DType::kInt32, nan, 0);
  expect_store(DType::kInt32, -0.9f, 0);
  expect_store(DType::kUInt8, -0.5f, 0);
  expect_store(DType::kUInt8, -1.0f, 0);
  expect_store(DType::kUInt8, 255.9f, 255);
  expect_store(DType::kUInt8, 256.0f, 255);
  expect_store(DType::kUInt8, nan, 0);
  expect_store(DType::kUInt16, 65535.99f, 65535);
  expect_store(DType::kUInt16, 1e9f, 65535);
  expect_store(DType::kUInt16, -kInf, 0);
  expect_store(DType::kUInt32, 2147483648.0f, 2147483648LL);
  expect_store(DType::kUInt32, 3e9f, 3000000000LL);
  expect_store(DType::kUInt32, 4294967040.0f, 4294967040LL);  // largest float below 2^32
  expect_store(DType::kUInt32, 4294967296.0f, 4294967295LL);
  expect_store(DType::kUInt32, kInf, 4294967295LL);
  expect_store(DType::kUInt32, -5.0f, 0);
  expect_store(DType::kUInt32, nan, 0);
  expect_store(DType::kUInt32, 12345.678f, 12345);
  expect_store(DType::kBool, 0.0f, 0);
  expect_store(DType::kBool, -0.0f, 0);
  expect_store(DType::kBool, 0.1f, 1);
  expect_store(DType::kBool, -2.0f, 1);
  expect_store(DType::kBool, nan, 1);  // NaN != 0, as NumPy's astype(bool)
  uint8_t b = 7;
  store_f32(&b, DType::kBool, 5.0f);
  EXPECT_EQ(b, 1);  // stored as exactly 1
}

TEST(Integers, LoadF32) {
  const int32_t big = 16777217;  // 2^24 + 1: rounds to nearest even
  EXPECT_EQ(load_f32(&big, DType::kInt32), 16777216.0f);
  const uint32_t umax = 0xFFFFFFFFu;
  EXPECT_EQ(load_f32(&umax, DType::kUInt32), 4294967296.0f);
  const int8_t neg = -128;
  EXPECT_EQ(load_f32(&neg, DType::kInt8), -128.0f);
  const uint16_t u16 = 65535;
  EXPECT_EQ(load_f32(&u16, DType::kUInt16), 65535.0f);
  const uint8_t t = 1, f = 0;
  EXPECT_EQ(load_f32(&t, DType::kBool), 1.0f);
  EXPECT_EQ(load_f32(&f, DType::kBool), 0.0f);
  // Unaligned access is allowed for the scalar functions.
  alignas(4) uint8_t raw[8] = {};
  const float v = 1.5f;
  std::memcpy(raw + 1, &v, 4);
  EXPECT_EQ(load_f32(raw + 1, DType::kFloat32), 1.5f);
}

TEST(Integers, StoreI64WrapsLikeNumPy) {
  auto stored = [](DType t, int64_t v) {
    alignas(8) uint8_t buf[8] = {};
    store_i64(buf, t, v);
    return load_i64(buf, t);
  };
  EXPECT_EQ(stored(DType::kInt8, 200), -56);
  EXPECT_EQ(stored(DType::kInt8, -129), 127);
  EXPECT_EQ(stored(DType::kUInt8, -1), 255);
  EXPECT_EQ(stored(DType::kUInt8, 256 + 7), 7);
  EXPECT_EQ(stored(DType::kInt16, 70000), 4464);
  EXPECT_EQ(stored(DType::kUInt16, -2), 65534);
  EXPECT_EQ(stored(DType::kInt32, (1LL << 32) + 5), 5);
  EXPECT_EQ(stored(DType::kInt32, 2147483648LL), -2147483648LL);
  EXPECT_EQ(stored(DType::kUInt32, -1), 4294967295LL);
  EXPECT_EQ(stored(DType::kBool, 256), 1);  // v != 0, not a wrap to 0
  EXPECT_EQ(stored(DType::kBool, 0), 0);
  EXPECT_EQ(stored(DType::kBool, -1), 1);
  // Floats: nearest float32, then the type's own rounding.
  EXPECT_EQ(stored(DType::kBFloat16, 257), 256);
  EXPECT_EQ(stored(DType::kBFloat16, 259), 260);
  EXPECT_EQ(stored(DType::kFloat16, 65519), 65504);
  EXPECT_EQ(stored(DType::kFloat16, -70000), std::numeric_limits<int64_t>::min());  // -inf saturates
  EXPECT_EQ(stored(DType::kFloat32, (1LL << 53) + 1), 1LL << 53);
  EXPECT_EQ(stored(DType::kFloat8E4M3, 1000), std::numeric_limits<int64_t>::max());  // inf
  EXPECT_EQ(stored(DType::kFloat8E4M3FN, 17), 16);
}

TEST(Integers, LoadI64FromFloats) {
  auto loaded = [](DType t, float v) {
    alignas(8) uint8_t buf[8] = {};
    store_f32(buf, t, v);
    return load_i64(buf, t);
  };
  EXPECT_EQ(loaded(DType::kFloat32, 2.9f), 2);
  EXPECT_EQ(loaded(DType::kFloat32, -2.9f), -2);
  EXPECT_EQ(loaded(DType::kFloat32, std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(loaded(DType::kFloat32, 1e30f), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(loaded(DType::kFloat32, -kInf), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(loaded(DType::kFloat32, 3e9f), 3000000000LL);
  EXPECT_EQ(loaded(DType::kBFloat16, -2.5f), -2);
  EXPECT_EQ(loaded(DType::kFloat16, 1000.7f), 1000);  // fp16 1000.5 → 1000
  EXPECT_EQ(loaded(DType::kFloat8E5M2, 7.0f), 7);
  const uint32_t u = 0xFFFFFFFFu;
  EXPECT_EQ(load_i64(&u, DType::kUInt32), 4294967295LL);
  const int16_t s = -32768;
  EXPECT_EQ(load_i64(&s, DType::kInt16), -32768);
}

// ---- bulk conversions -------------------------------------------------------------------------------

std::vector<float> interesting_floats(size_t n, uint32_t seed) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          kInf,
                          -kInf,
                          std::numeric_limits<float>::quiet_NaN(),
                          float_of(0xFF800001),
                          kFltMax,
                          -kFltMax,
                          0.5f,
                          -0.5f,
                          1.5f,
                          2.5f,
                          -2.5f,
                          127.5f,
                          128.0f,
                          255.5f,
                          256.0f,
                          65535.5f,
                          65536.0f,
                          2147483648.0f,
                          -2147483648.0f,
                          4294967296.0f,
                          240.0f,
                          248.0f,
                          448.0f,
                          464.0f,
                          480.0f,
                          57344.0f,
                          61440.0f,
                          65504.0f,
                          65520.0f,
                          float_of(1),
                          float_of(0x80000001)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> small(-300.0f, 300.0f);
  std::uniform_int_distribution<int> exponent(-30, 40);
  while (v.size() < n) {
    switch (v.size() % 4) {
      case 0: v.push_back(small(rng)); break;
      case 1: v.push_back(std::round(small(rng))); break;
      case 2: v.push_back(float_of(static_cast<uint32_t>(rng()))); break;  // any pattern, NaNs too
      default: v.push_back(std::ldexp(small(rng), exponent(rng))); break;
    }
  }
  return v;
}

TEST(Bulk, ConvertFromF32AgreesWithStoreF32ForEveryDType) {
  const std::vector<float> xs = interesting_floats(5000, 1);
  for (DType t : all_dtypes()) {
    for (Fp8Overflow ovf : {Fp8Overflow::kNonSaturating, Fp8Overflow::kSaturating}) {
      const auto size = static_cast<size_t>(dtype_size(t));
      // Lengths around the vector block size exercise the blocked loop and its scalar tail.
      for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{100}, xs.size()}) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n));
        std::vector<uint8_t> bulk(n * size + 1, 0xAB), scalar(n * size + 1, 0xAB);
        convert_from_f32(xs.data(), bulk.data(), t, static_cast<int64_t>(n), ovf);
        for (size_t i = 0; i < n; ++i) store_f32(scalar.data() + i * size, t, xs[i], ovf);
        ASSERT_EQ(bulk, scalar);  // the guard byte after the run is untouched too
      }
    }
  }
}

TEST(Bulk, ConvertToF32AgreesWithLoadF32ForEveryDType) {
  std::mt19937 rng(2);
  std::vector<uint8_t> raw(4 * 5000);
  for (auto& b : raw) b = static_cast<uint8_t>(rng());
  for (DType t : all_dtypes()) {
    const auto size = static_cast<size_t>(dtype_size(t));
    std::vector<uint8_t> data = raw;
    if (t == DType::kBool) {
      for (auto& b : data) b &= 1;  // bool storage holds 0 or 1
    }
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{33}, size_t{5000}}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " n=" + std::to_string(n));
      std::vector<float> bulk(n + 1, 7.0f);
      convert_to_f32(data.data(), t, bulk.data(), static_cast<int64_t>(n));
      Mismatches m;
      for (size_t i = 0; i < n; ++i) {
        const float want = load_f32(data.data() + i * size, t);
        if (bits_of(bulk[i]) != bits_of(want))
          m.add(std::to_string(i) + ": " + describe(bulk[i]) + " vs " + describe(want));
      }
      EXPECT_EQ(bulk[n], 7.0f);
      EXPECT_NO_MISMATCHES(m);
    }
  }
}

TEST(Bulk, UnalignedBuffersWork) {
  // Element pointers one byte off their natural alignment (e.g. a view into a packed byte buffer).
  const std::vector<float> xs = interesting_floats(100, 4);
  for (DType t : all_dtypes()) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const auto size = static_cast<size_t>(dtype_size(t));
    std::vector<uint8_t> aligned(xs.size() * size), shifted(xs.size() * size + 1);
    convert_from_f32(xs.data(), aligned.data(), t, static_cast<int64_t>(xs.size()));
    convert_from_f32(xs.data(), shifted.data() + 1, t, static_cast<int64_t>(xs.size()));
    EXPECT_TRUE(std::equal(aligned.begin(), aligned.end(), shifted.begin() + 1));
    std::vector<float> a(xs.size()), b(xs.size() + 1);
    convert_to_f32(aligned.data(), t, a.data(), static_cast<int64_t>(xs.size()));
    convert_to_f32(shifted.data() + 1, t, b.data(), static_cast<int64_t>(xs.size()));
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  }
}

TEST(Bulk, RoundTripThroughEveryDTypeIsIdempotent) {
  // Converting a value into a type and back, then again, changes nothing the second time.
  const std::vector<float> xs = interesting_floats(3000, 3);
  for (DType t : all_dtypes()) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const auto n = static_cast<int64_t>(xs.size());
    std::vector<uint8_t> once(xs.size() * 4), twice(xs.size() * 4);
    std::vector<float> back(xs.size());
    convert_from_f32(xs.data(), once.data(), t, n);
    convert_to_f32(once.data(), t, back.data(), n);
    convert_from_f32(back.data(), twice.data(), t, n);
    EXPECT_EQ(once, twice);
  }
}

// ---- promotion --------------------------------------------------------------------------------------

TEST(Promotion, SymmetricBoolIdentitySelfIdempotent) {
  for (DType a : arithmetic_dtypes()) {
    EXPECT_EQ(promote_types(a, a), a) << dtype_name(a);
    EXPECT_EQ(promote_types(a, DType::kBool), a) << dtype_name(a);
    for (DType b : arithmetic_dtypes()) {
      EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << dtype_name(a) << ", " << dtype_name(b);
      const DType r = promote_types(a, b);
      // The result promotes with either side to itself (it covers both).
      EXPECT_EQ(promote_types(r, a), r) << dtype_name(a) << ", " << dtype_name(b);
    }
  }
}

TEST(Promotion, SpecPairs) {
  struct Case {
    DType a, b, want;
  };
  using D = DType;
  const Case cases[] = {
      // (float, int) → the float (nki-spec §3.9 examples).
      {D::kInt32, D::kFloat16, D::kFloat16},
      {D::kUInt16, D::kTFloat32, D::kTFloat32},
      {D::kUInt32, D::kFloat8E4M3, D::kFloat8E4M3},
      {D::kInt8, D::kFloat8E5M2, D::kFloat8E5M2},
      {D::kInt32, D::kBFloat16, D::kBFloat16},
      {D::kBool, D::kFloat8E4M3FN, D::kFloat8E4M3FN},
      // (float, float).
      {D::kFloat32, D::kTFloat32, D::kFloat32},
      {D::kFloat32, D::kBFloat16, D::kFloat32},
      {D::kFloat16, D::kBFloat16, D::kFloat32},
      {D::kFloat8E4M3, D::kFloat16, D::kFloat16},
      {D::kFloat8E4M3, D::kBFloat16, D::kBFloat16},
      {D::kFloat8E4M3, D::kFloat8E5M2, D::kBFloat16},
      {D::kFloat8E4M3FN, D::kFloat8E5M2, D::kBFloat16},
      {D::kFloat8E4M3, D::kFloat8E4M3FN, D::kBFloat16},
      {D::kFloat8E5M2, D::kFloat16, D::kFloat16},
      {D::kTFloat32, D::kBFloat16, D::kTFloat32},
      {D::kTFloat32, D::kFloat16, D::kTFloat32},
      {D::kTFloat32, D::kFloat8E4M3, D::kTFloat32},
      {D::kFloat32, D::kFloat8E5M2, D::kFloat32},
      {D::kFloat32, D::kFloat16, D::kFloat32},
      {D::kFloat8E4M3FN, D::kBFloat16, D::kBFloat16},
      {D::kFloat8E4M3FN, D::kFloat16, D::kFloat16},
      // (int, int).
      {D::kInt16, D::kInt32, D::kInt32},
      {D::kUInt8, D::kUInt16, D::kUInt16},
      {D::kUInt16, D::kInt32, D::kInt32},
      {D::kInt8, D::kUInt8, D::kInt16},
      {D::kInt8, D::kUInt16, D::kInt32},
      {D::kInt16, D::kUInt16, D::kInt32},
      {D::kInt16, D::kUInt8, D::kInt16},
      {D::kInt32, D::kUInt32, D::kFloat32},
      {D::kInt8, D::kUInt32, D::kFloat32},
      {D::kUInt8, D::kUInt32, D::kUInt32},
      {D::kInt8, D::kInt16, D::kInt16},
      // bool.
      {D::kBool, D::kUInt8, D::kUInt8},
      {D::kBool, D::kBool, D::kBool},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(promote_types(c.a, c.b), c.want) << dtype_name(c.a) << ", " << dtype_name(c.b);
  }
}

// Two integer types give the smallest integer type whose range holds both, and float32 when
// there is none (no 64-bit integers on the hardware).
TEST(Promotion, IntegersTakeTheSmallestTypeCoveringBoth) {
  struct Range {
    DType t;
    int64_t lo, hi;
  };
  const Range ints[] = {
      // by size, so the first cover found is the smallest
      {DType::kInt8, -128, 127},
      {DType::kUInt8, 0, 255},
      {DType::kInt16, -32768, 32767},
      {DType::kUInt16, 0, 65535},
      {DType::kInt32, INT32_MIN, INT32_MAX},
      {DType::kUInt32, 0, UINT32_MAX},
  };
  for (const Range& a : ints) {
    for (const Range& b : ints) {
      DType want = DType::kFloat32;
      for (const Range& c : ints) {
        if (c.lo <= std::min(a.lo, b.lo) && c.hi >= std::max(a.hi, b.hi)) {
          want = c.t;
          break;
        }
      }
      EXPECT_EQ(promote_types(a.t, b.t), want) << dtype_name(a.t) << ", " << dtype_name(b.t);
    }
  }
}

TEST(Promotion, FloatWinsOverIntAndBool) {
  for (DType f : arithmetic_dtypes()) {
    if (!dtype_is_float(f)) continue;
    for (DType i : arithmetic_dtypes()) {
      if (dtype_is_float(i)) continue;
      EXPECT_EQ(promote_types(f, i), f) << dtype_name(f) << ", " << dtype_name(i);
    }
  }
}

TEST(Promotion, ScalarsWidenWeakly) {
  EXPECT_EQ(scalar_dtype(ScalarKind::kBool), DType::kUInt8);
  EXPECT_EQ(scalar_dtype(ScalarKind::kInt), DType::kInt32);
  EXPECT_EQ(scalar_dtype(ScalarKind::kFloat), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kInt8, scalar_dtype(ScalarKind::kInt)), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kFloat16, scalar_dtype(ScalarKind::kFloat)), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kBFloat16, scalar_dtype(ScalarKind::kInt)), DType::kBFloat16);
}

}  // namespace
}  // namespace nki_agent
