// tensor/vector_math.h against float64 libm rounded to float32: within one ulp over float32 inputs
// of every magnitude and densely over the activations' working range, and exactly at the special
// values (zeros, infinities, NaN, the overflow and underflow edges).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tensor/vector_math.h"

namespace nki_agent {
namespace {

using ArrayFn = void (*)(const float*, float*, int64_t);

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double softplus(double x) {
  return x > 20 ? x : std::log1p(std::exp(x));
}
// The limit 0 at -inf of the x * (something reaching 0) forms, x at +inf.
double limit_or(double x, const std::function<double(double)>& f) {
  if (std::isinf(x)) return x > 0 ? x : 0.0;
  return f(x);
}

struct Function {
  std::string name;
  ArrayFn fn;
  std::function<double(double)> ref;
};

std::vector<Function> functions() {
  return {
      {"exp", vexp_f32, [](double x) { return std::exp(x); }},
      {"log", vlog_f32, [](double x) { return std::log(x); }},
      {"tanh", vtanh_f32, [](double x) { return std::tanh(x); }},
      {"sigmoid", vsigmoid_f32, sigmoid},
      {"silu", vsilu_f32, [](double x) { return limit_or(x, [](double v) { return v * sigmoid(v); }); }},
      {"gelu_sigmoid", vgelu_sigmoid_f32,
       [](double x) { return limit_or(x, [](double v) { return v * sigmoid(1.702 * v); }); }},
      // x sigmoid(2u) is 0.5 x (1 + tanh(u)) without the cancellation of 1 + tanh(u) for negative x.
      {"gelu_tanh", vgelu_tanh_f32,
       [](double x) {
         return limit_or(x, [](double v) { return v * sigmoid(2 * 0.79788456080286536 * (v + 0.044715 * v * v * v)); });
       }},
      {"softplus", vsoftplus_f32, softplus},
      {"mish", vmish_f32, [](double x) { return limit_or(x, [](double v) { return v * std::tanh(softplus(v)); }); }},
      {"sin", vsin_f32, [](double x) { return std::sin(x); }},
      {"cos", vcos_f32, [](double x) { return std::cos(x); }},
  };
}

// Distance in float32 steps; NaN only matches NaN.
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto key = [](float f) {
    const auto i = std::bit_cast<int32_t>(f);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return std::llabs(key(a) - key(b));
}

void expect_within_one_ulp(const Function& f, const std::vector<float>& in, const char* what) {
  std::vector<float> out(in.size());
  f.fn(in.data(), out.data(), static_cast<int64_t>(in.size()));
  int64_t off = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const auto want = static_cast<float>(f.ref(in[i]));
    const int64_t d = ulps(out[i], want);
    off += d != 0;
    if (d > 1) {
      ADD_FAILURE() << f.name << "(" << in[i] << ") = " << out[i] << ", want " << want << " (" << what << ")";
      return;
    }
  }
  // Correctly rounded but within 1e-12 of a rounding boundary: a handful in millions.
  EXPECT_LE(off, static_cast<int64_t>(in.size() / 100000 + 2)) << f.name << " (" << what << ")";
}

TEST(VectorMath, WithinOneUlpAtEveryMagnitude) {
  std::vector<float> in;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 40961)  // prime stride: every exponent, both signs
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (const Function& f : functions()) expect_within_one_ulp(f, in, "a sweep of all float32");
}

TEST(VectorMath, WithinOneUlpOverTheWorkingRange) {
  std::vector<float> in;
  for (int i = -40 * 32768; i <= 40 * 32768; ++i) in.push_back(static_cast<float>(i) / 32768.0f);
  ASSERT_GT(in.size(), 1000000u);
  for (const Function& f : functions()) expect_within_one_ulp(f, in, "[-40, 40]");
}

TEST(VectorMath, SpecialValuesAreExact) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kTiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> in{0.0f,   -0.0f,   kInf,   -kInf,  kMax,    -kMax,   kTiny,  -kTiny,
                              1e-30f, -1e-30f, 88.72f, 88.73f, -103.9f, -104.0f, -87.0f, -150.0f,
                              20.0f,  20.01f,  -20.0f, 1e4f,   -1e4f,   1e5f,    -1e5f,  0x1p-126f};
  for (const Function& f : functions()) {
    std::vector<float> out(in.size());
    f.fn(in.data(), out.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      const auto want = static_cast<float>(f.ref(in[i]));
      EXPECT_EQ(ulps(out[i], want), 0) << f.name << "(" << in[i] << ") = " << out[i] << ", want " << want;
      if (want == 0 && out[i] == 0) {
        EXPECT_EQ(std::signbit(out[i]), std::signbit(want)) << f.name << "(" << in[i] << ")";
      }
    }
    // NaN stays NaN (with its payload) and log of a negative number is NaN.
    const float nan = std::bit_cast<float>(0x7fc01234u);
    float got = 0;
    f.fn(&nan, &got, 1);
    EXPECT_EQ(std::bit_cast<uint32_t>(got), 0x7fc01234u) << f.name;
  }
  float neg = -1.0f, got = 0;
  vlog_f32(&neg, &got, 1);
  EXPECT_TRUE(std::isnan(got));
}

TEST(VectorMath, WritesInPlaceAndAnyLength) {
  for (int64_t n : {0, 1, 7, 8, 15, 17, 1000}) {
    std::vector<float> a(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i) * 0.37f - 5.0f;
    for (int64_t i = 0; i < n; ++i)
      want[static_cast<size_t>(i)] = static_cast<float>(std::tanh(double{a[static_cast<size_t>(i)]}));
    vtanh_f32(a.data(), a.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_LE(ulps(a[static_cast<size_t>(i)], want[static_cast<size_t>(i)]), 1) << i;
  }
}

}  // namespace
}  // namespace nki_agent
