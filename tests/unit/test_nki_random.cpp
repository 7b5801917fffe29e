// The instructions that draw random numbers (nl.rand, nisa.rng, nisa.dropout, nl.dropout) and the
// running accumulator of nisa.tensor_scalar_cumulative, in both dialects: the draws repeat exactly
// from one run of a kernel call to the next and have the documented distribution and semantics;
// the cumulative instruction follows AWS's pseudocode for each reduce_cmd.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

class NkiRandom : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, const std::string& entry, std::vector<Tensor> inputs,
                                   std::map<std::string, std::string> kwargs = {}) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    c.kwargs = std::move(kwargs);
    return python_run(c);
  }
  static Tensor ramp(const Shape& s, float base = 1.0f) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = base + static_cast<float>(i % 7);
    return Tensor::from_f32(s, v);
  }
};

// nl.rand: uniform in [0, 1), the same values on every run of the kernel, new values at each call
// inside it; nisa.rng: integer bits across the type's range.
TEST_F(NkiRandom, RandAndRngRepeatPerKernelCall) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    bits_out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    r1 = nl.rand((128, 512), dtype=nl.float32)
    r2 = nl.rand((128, 512), dtype=nl.float32)
    nisa.dma_copy(dst=out[:, 0:512], src=r1)
    nisa.dma_copy(dst=out[:, 512:1024], src=r2)
    b = nl.ndarray((128, 64), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.rng(dst=b, engine=nisa.engine.gpsimd)
    nisa.dma_copy(dst=bits_out, src=b)
    return out, bits_out
)py";
  auto first = run(src, "k", {ramp({1, 1})});
  ASSERT_TRUE(first) << first.error().format();
  auto again = run(src, "k", {ramp({1, 1})});
  ASSERT_TRUE(again) << again.error().format();
  const std::vector<float> v = first->outputs[0].to_f32_vector();
  EXPECT_EQ(v, again->outputs[0].to_f32_vector());
  EXPECT_EQ(first->outputs[1].to_f32_vector(), again->outputs[1].to_f32_vector());
  double sum = 0;
  for (float x : v) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LT(x, 1.0f);
    sum += x;
  }
  EXPECT_NEAR(sum / static_cast<double>(v.size()), 0.5, 0.01);  // 131072 draws: 5 standard errors is 0.004
  EXPECT_NE(std::vector<float>(v.begin(), v.begin() + 512), std::vector<float>(v.begin() + 512, v.begin() + 1024));
  float lo = 255, hi = 0;
  for (float b : first->outputs[1].to_f32_vector()) {
    EXPECT_EQ(b, std::floor(b));
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  EXPECT_EQ(lo, 0.0f);  // 8192 bytes cover 0 and 255
  EXPECT_EQ(hi, 255.0f);
}

// nl.random_seed / nisa.set_rng_seed restart the draws: the same seed repeats them, another seed
// gives others; a seed that is not [1, 1] is refused.
TEST_F(NkiRandom, RandomSeedRepeatsTheDraws) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((4, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    s42 = nl.full((1, 1), 42, dtype=nl.int32, buffer=nl.sbuf)
    s7 = nl.full((1, 1), 7, dtype=nl.int32, buffer=nl.sbuf)
    nl.random_seed(s42)
    r1 = nl.rand((4, 32), dtype=nl.float32)
    nisa.set_rng_seed(s42)
    r2 = nl.rand((4, 32), dtype=nl.float32)
    nl.random_seed(s7)
    r3 = nl.rand((4, 32), dtype=nl.float32)
    for i, r in enumerate((r1, r2, r3)):
        nisa.dma_copy(dst=out[:, i * 32:(i + 1) * 32], src=r)
    return out

@nki.jit
def bad(a):
    nl.random_seed(nl.full((2, 1), 1, dtype=nl.int32, buffer=nl.sbuf))
    return a
)py";
  auto r = run(src, "k", {ramp({1, 1})});
  ASSERT_TRUE(r) << r.error().format();
  const std::vector<float> v = r->outputs[0].to_f32_vector();
  std::vector<float> a, b, c;
  for (size_t row = 0; row < 4; ++row) {
    a.insert(a.end(), v.begin() + static_cast<long>(row * 96), v.begin() + static_cast<long>(row * 96 + 32));
    b.insert(b.end(), v.begin() + static_cast<long>(row * 96 + 32), v.begin() + static_cast<long>(row * 96 + 64));
    c.insert(c.end(), v.begin() + static_cast<long>(row * 96 + 64), v.begin() + static_cast<long>(row * 96 + 96));
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto refused = run(src, "bad", {ramp({1, 1})});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "nkia_scalar_operand_shape") << refused.error().format();
}

// nisa.dropout (current) and nisa.dropout / nl.dropout (legacy): each element kept as it is or
// zeroed, at the given rate; prob 0 keeps everything, prob 1 drops everything, a [P, 1] tile sets
// each partition's rate.
TEST_F(NkiRandom, DropoutZeroesAtTheGivenRate) {
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a, prob):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    d = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dropout(dst=d, data=x, prob=prob)
    nisa.dma_copy(dst=out, src=d)
    return out

@nki.jit
def per_partition(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    p = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=p[0:64, :], value=0.0)
    nisa.memset(dst=p[64:128, :], value=1.0)
    nisa.dropout(dst=x, data=x, prob=p)
    nisa.dma_copy(dst=out, src=x)
    return out
)py";
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(a, prob):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    d = nisa.dropout(nl.load(a), prob=prob)
    nl.store(out, value=nl.dropout(d, rate=0.0))
    return out
)py";
  Tensor a = ramp({128, 256});
  const std::vector<float> av = a.to_f32_vector();
  for (const char* src : {current, legacy})
    for (const auto& [prob, want] : std::vector<std::pair<std::string, double>>{{"0.0", 0}, {"1.0", 1}, {"0.3", 0.3}}) {
      auto r = run(src, "k", {a}, {{"prob", prob}});
      ASSERT_TRUE(r) << r.error().format();
      const std::vector<float> got = r->outputs[0].to_f32_vector();
      int64_t zeros = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] == 0.0f)
          ++zeros;
        else
          EXPECT_EQ(got[i], av[i]) << i;
      }
      const double rate = static_cast<double>(zeros) / static_cast<double>(got.size());
      EXPECT_NEAR(rate, want, 0.015) << prob;  // 32768 draws: 5 standard errors is 0.013
    }
  auto r = run(current, "per_partition", {a});
  ASSERT_TRUE(r) << r.error().format();
  const std::vector<float> got = r->outputs[0].to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i < 64 * 256 ? av[i] : 0.0f) << i;
}

// tensor_scalar_cumulative, as AWS's pseudocode: reg = op1(src op0 imm0, reg) along each partition,
// starting at op1's identity, at imm1 (load_reduce) or where the previous one left it (reduce).
TEST_F(NkiRandom, TensorScalarCumulativeFollowsThePseudocode) {
  const char* src = R"py(
import numpy as np
import {nki} as nki
import {nki}.isa as nisa
import {nki}.language as nl

@nki.jit
def k(a, init):
    out = nl.ndarray((a.shape[0], 4 * a.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    F = a.shape[1]
    c = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=c, src=x, op0=nl.multiply, op1=nl.add, imm0=np.float32(2.0))
    nisa.dma_copy(dst=out[:, 0:F], src=c)
    nisa.tensor_scalar_cumulative(dst=c, src=x, op0=nl.multiply, op1=nl.add, imm0=2.0,
                                  reduce_cmd=nisa.reduce_cmd.reduce)
    nisa.dma_copy(dst=out[:, F:2 * F], src=c)
    t = nl.full((a.shape[0], 1), init, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=c, src=x, op0=nl.add, op1=nl.maximum, imm0=-3.0, imm1=t,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce)
    nisa.dma_copy(dst=out[:, 2 * F:3 * F], src=c)
    nisa.tensor_scalar_cumulative(dst=c, src=x, op0=nl.add, op1=nl.subtract, imm0=0.0)
    nisa.dma_copy(dst=out[:, 3 * F:4 * F], src=c)
    return out

@nki.jit
def reduce_first(a, init):
    c = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=c, src=c, op0=nl.add, op1=nl.add, imm0=0.0, reduce_cmd=nisa.reduce_cmd.reduce)
    return a
)py";
  Tensor a = ramp({128, 16}, -2.0f);
  const std::vector<float> av = a.to_f32_vector();
  for (const char* dialect : {"nki", "neuronxcc.nki"}) {
    std::string text = src;
    for (size_t at; (at = text.find("{nki}")) != std::string::npos;) text.replace(at, 5, dialect);
    auto r = run(text, "k", {a}, {{"init", "1.5"}});
    ASSERT_TRUE(r) << r.error().format();
    const std::vector<float> got = r->outputs[0].to_f32_vector();
    for (int64_t p = 0; p < 128; ++p) {
      float sum = 0, chained = 0, mx = 1.5f, sub = 0;
      for (int64_t i = 0; i < 16; ++i) {
        const float x = av[static_cast<size_t>(p * 16 + i)];
        sum += x * 2.0f;
        mx = std::max(x - 3.0f, mx);
        sub = x - sub;
        const size_t row = static_cast<size_t>(p * 64);
        EXPECT_EQ(got[row + static_cast<size_t>(i)], sum) << p << "," << i;
        EXPECT_EQ(got[row + 32 + static_cast<size_t>(i)], mx) << p << "," << i;
        EXPECT_EQ(got[row + 48 + static_cast<size_t>(i)], sub) << p << "," << i;
      }
      chained = sum;
      for (int64_t i = 0; i < 16; ++i) {
        chained += av[static_cast<size_t>(p * 16 + i)] * 2.0f;
        EXPECT_EQ(got[static_cast<size_t>(p * 64 + 16 + i)], chained) << p << "," << i;
      }
    }
    auto bad = run(text, "reduce_first", {a}, {{"init", "0.0"}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, "nkia_bad_operand") << bad.error().format();
    EXPECT_NE(bad.error().message.find("none ran"), std::string::npos) << bad.error().format();
  }
}

}  // namespace
}  // namespace nki_agent
