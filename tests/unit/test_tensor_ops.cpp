// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// tests/unit/test_tensor_ops.cpp — seeded random differential tests of tensor/ops.h against NumPy
// (tests/oracle/tensor_ops.py): broadcasting, every BinaryOp and UnaryOp, type promotion, every
// ReduceOp over every axis subset, argmax/argmin and matmul, on contiguous and strided inputs.
//
// Each test writes all its cases to one scratch folder and runs the oracle once. Strided inputs
// are passed to the library as views and written for NumPy in C order by npy_save, so NumPy sees
// the same logical values. Narrow float inputs are written as their exact float32 values.
//
// The library follows NKI's type rules and the engines' arithmetic (ops.h): float operands are
// widened to float32, computed in float32 and rounded once into the result type. Where NumPy would
// compute in another type (float32 × int32 → float64 in NumPy, float32 in NKI), the oracle is told
// to compute in float32 ("f32" mode) or int64 ("i64" mode) and to round / wrap into the NKI result
// type; where the rules coincide it runs NumPy's own ufunc ("native" mode).
//
// Tolerances (got vs the oracle's answer; |got - want| <= atol + rtol * |want|; NaN matches NaN,
// ±inf must match exactly, -0 matches +0 except in the tests that check the sign of zero):
//
//   what                                            dtype        rtol              atol
//   binary add/sub/mul/div/floor_div/mod/fmod/       any          exact             exact
//     max/min, comparisons, logical, bitwise,
//     shifts (IEEE-exact or integer operations)
//   binary power (glibc powf vs NumPy's SIMD pow)    float32      1e-6 (~8 ulp)     0
//                                                    narrow       + 1 ulp of the result type
//   unary negative/abs/sign/square/reciprocal/sqrt/  float32      exact             exact
//     floor/ceil/trunc/rint/relu/logical_not
//   unary rsqrt (1/sqrt: two roundings)              float32      3e-7 (~2.5 ulp)   0
//   unary exp/log/sin/cos/tan/tanh/arctan/erf        float32      1e-6 (~8 ulp)     1e-30
//     vs float64 NumPy then cast to float32
//   unary sigmoid/silu/softplus vs the float64      float32      1e-6              1e-30
//     formula
//   unary gelu/gelu_tanh vs float64 formula (the     float32      1e-5              1e-6
//     float32 1+erf / 1+tanh cancels for x < -3)
//   unary transcendental, float16 result             float16      1e-6 + 2^-10      1e-7
//   binary on bf16 / tf32 / float8 operands or       narrow       exact             exact
//     out_dtype: float32 math rounded (RNE) by NumPy
//   binary_into / unary_into vs binary() / unary()   any          exact             exact
//   unary on bf16 / tf32 / float8 vs the library's   narrow       exact             exact
//     own float32 result rounded (RNE) by NumPy
//   reduce sum/mean vs float64 NumPy                 float32      1e-5              1e-6
//   reduce prod vs float64 NumPy                     float32      1e-5              1e-30
//   reduce max/min/all/any                           any          exact             exact
//   reduce sum/prod of integers                      int          exact (int64 then wrapped)
//   reduce mean of integers                          float32      1e-6              0
//   reduce on bfloat16 vs float64 rounded to bf16    bfloat16     2^-8 (1 ulp)      1e-6
//   argmax/argmin                                    int32        exact
//   matmul float32 (and float × int)                 float32      per element: |got - ref| <=
//                                                                 1e-5 * (|a| @ |b|) + 1e-30
//   matmul float16 / bfloat16 / float8_e4m3          narrow       + 1 ulp of the result type
//     (float32 result rounded once)                               (2^-10 / 2^-8 / 2^-3 relative)
//   matmul integer / bool                            int          exact (int64 then wrapped)
#include "tensor/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/python_oracle.h"
#include "support/tensor_oracle.h"
#include "tensor/npy.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

using nlohmann::json;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const std::vector<DType> kAllDTypes = {DType::kFloat32,    DType::kBFloat16,     DType::kFloat16,    DType::kTFloat32,
                                       DType::kFloat8E4M3, DType::kFloat8E4M3FN, DType::kFloat8E5M2, DType::kInt8,
                                       DType::kInt16,      DType::kInt32,        DType::kUInt8,      DType::kUInt16,
                                       DType::kUInt32,     DType::kBool};

constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::kRightShift) + 1;
constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::kInvert) + 1;
constexpr int kNumReduceOps = static_cast<int>(ReduceOp::kAny) + 1;

// ---- oracle plumbing ---------------------------------------------------------------------------

using Oracle = testing::TensorOracle;

struct Tol {
  double rtol = 0.0;
  double atol = 0.0;
};
constexpr Tol kExact{};

std::string index_str(const Shape& shape, int64_t flat) {
  Shape idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] > 0) {
      idx[i] = flat % shape[i];
      flat /= shape[i];
    }
  }
  return shape_str(idx);
}

bool values_match(double got, double want, Tol tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

// Shape and values of got against the oracle's want. Integer / bool results compare exactly as
// int64; float results as float32 values under tol.
::testing::AssertionResult tensors_match(const Tensor& got, const Tensor& want, Tol tol, const std::string& what) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << what << ": shape " << shape_str(got.shape()) << ", NumPy "
                                         << shape_str(want.shape());
  int bad = 0;
  std::ostringstream msg;
  if (!dtype_is_float(got.dtype()) && !dtype_is_float(want.dtype())) {
    const auto g = got.to_i64_vector(), w = want.to_i64_vector();
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != w[i] && bad++ < 6)
        msg << "\n  at " << index_str(got.shape(), static_cast<int64_t>(i)) << ": got " << g[i] << ", NumPy " << w[i];
  } else {
    const auto g = got.to_f32_vector(), w = want.to_f32_vector();
    for (size_t i = 0; i < g.size(); ++i)
      if (!values_match(g[i], w[i], tol) && bad++ < 6)
        msg << "\n  at " << index_str(got.shape(), static_cast<int64_t>(i)) << ": got " << g[i] << " (" << std::hexfloat
            << g[i] << std::defaultfloat << "), NumPy " << w[i] << " (" << std::hexfloat << w[i] << std::defaultfloat
            << ")";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << got.numel() << " elements differ (rtol "
                                       << tol.rtol << ", atol " << tol.atol << ")" << msg.str();
}

std::string describe(const Tensor& t) {
  std::ostringstream s;
  s << dtype_name(t.dtype()) << shape_str(t.shape()) << " strides " << shape_str(t.strides());
  return s.str();
}

json shape_json(const Shape& s) {
  return json(std::vector<int64_t>(s.begin(), s.end()));
}

// ---- random inputs -----------------------------------------------------------------------------

enum class Profile {
  kGeneral,   // wide values, small integers (for exact ties), specials for floats
  kFinite,    // like kGeneral but no inf / NaN
  kDivisor,   // kGeneral with many zeros and ±1
  kExponent,  // power exponents: small non-negative integers (ints), small values (floats)
  kPowBase,   // power bases: small magnitudes
  kShift,     // shift counts: -3 .. bits+3
  kSmallInt,  // integers in [-4, 4] (ties for argmax, exact float sums)
};

float draw_float(Rng& rng, Profile p) {
  const double u = rng.uniform();
  switch (p) {
    case Profile::kExponent:
      if (u < 0.5) return static_cast<float>(rng.integers(-3, 6));
      return static_cast<float>(rng.uniform() * 6.0 - 3.0);
    case Profile::kPowBase:
      if (u < 0.05) return 0.0f;
      if (u < 0.1) return static_cast<float>(rng.integers(-2, 3));
      return static_cast<float>(rng.uniform() * 8.0 - 4.0);
    case Profile::kSmallInt: return static_cast<float>(rng.integers(-4, 5));
    case Profile::kDivisor:
      if (u < 0.1) return 0.0f;
      if (u < 0.15) return -0.0f;
      if (u < 0.25) return rng.uniform() < 0.5 ? 1.0f : -1.0f;
      break;
    default: break;
  }
  if (p != Profile::kFinite && u > 0.9) {
    static constexpr float kSpecials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-40f, -3e-39f, 6.5e4f, 3e38f, -1.0f};
    return kSpecials[rng.integers(0, 10)];
  }
  if (u > 0.75) return static_cast<float>(rng.integers(-8, 9));
  const double scale = std::pow(10.0, rng.uniform() * 4.0 - 1.0);
  return static_cast<float>(rng.normal() * scale);
}

int64_t draw_int(Rng& rng, DType dt, Profile p) {
  const IntRange r = int_dtype_range(dt);
  if (dt == DType::kBool) return rng.integers(0, 2);
  auto clip = [&](int64_t v) { return std::clamp(v, r.lo, r.hi); };
  const double u = rng.uniform();
  switch (p) {
    case Profile::kExponent: return clip(rng.integers(0, 7));
    case Profile::kPowBase: return clip(rng.integers(-6, 7));
    case Profile::kShift: return clip(rng.integers(-3, 8 * dtype_size(dt) + 4));
    case Profile::kSmallInt: return clip(rng.integers(-4, 5));
    case Profile::kDivisor:
      if (u < 0.15) return 0;
      if (u < 0.3) return clip(rng.uniform() < 0.5 ? 1 : -1);
      break;
    default: break;
  }
  if (u < 0.3) return clip(rng.integers(-9, 10));
  if (u < 0.35) return rng.uniform() < 0.5 ? r.lo : r.hi;
  return rng.integers(r.lo, r.hi + 1);
}

Tensor make_values(Rng& rng, const Shape& shape, DType dt, Profile p) {
  const int64_t n = shape_numel(shape);
  if (dtype_is_float(dt)) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = draw_float(rng, p);
    return Tensor::from_f32(shape, v, dt);
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = draw_int(rng, dt, p);
  return Tensor::from_i64(shape, v, dt);
}

// A view of the given shape over random values, laid out by `kind`:
//   0 contiguous, 1 transposed, 2 every other element with positive or negative steps,
//   3 broadcast (zero strides) along some axes, 4 a select() out of a larger tensor,
//   5 a negative-step slice of a transposed tensor.
Tensor make_view(Rng& rng, const Shape& shape, DType dt, Profile p, int kind) {
  const int nd = static_cast<int>(shape.size());
  switch (kind) {
    case 1: {
      std::vector<int> perm(static_cast<size_t>(nd));
      std::iota(perm.begin(), perm.end(), 0);
      for (int i = nd - 1; i > 0; --i) std::swap(perm[i], perm[rng.integers(0, i + 1)]);
      Shape base_shape(shape.size());
      for (int i = 0; i < nd; ++i) base_shape[perm[i]] = shape[i];
      return make_values(rng, base_shape, dt, p).transpose(perm);
    }
    case 2: {
      Shape base_shape(shape.size());
      for (int i = 0; i < nd; ++i) base_shape[i] = 2 * shape[i] + 1;
      Tensor v = make_values(rng, base_shape, dt, p);
      for (int i = 0; i < nd; ++i) {
        const int64_t off = rng.integers(0, 2);
        if (rng.uniform() < 0.5) {
          v = v.slice(i, off, off + 2 * shape[i], 2);
        } else {
          v = v.slice(i, Slice{Slice::kNone, Slice::kNone, -2}).slice(i, off, off + shape[i]);
        }
      }
      return v;
    }
    case 3: {
      Shape base_shape = shape;
      for (int i = 0; i < nd; ++i)
        if (rng.uniform() < 0.5) base_shape[i] = 1;
      const int drop = nd > 0 ? static_cast<int>(rng.integers(0, 2)) : 0;
      base_shape.erase(base_shape.begin(), base_shape.begin() + drop);
      return make_values(rng, base_shape, dt, p).broadcast_to(shape);
    }
    case 4: {
      const int ax = static_cast<int>(rng.integers(0, nd + 1));
      Shape base_shape = shape;
      base_shape.insert(base_shape.begin() + ax, 3);
      return make_values(rng, base_shape, dt, p).select(ax, rng.integers(0, 3));
    }
    case 5: {
      if (nd < 2) break;
      Shape base_shape = shape;
      std::swap(base_shape[0], base_shape[nd - 1]);
      Tensor v = make_values(rng, base_shape, dt, p).swapaxes(0, nd - 1);
      return v.slice(nd - 1, Slice{Slice::kNone, Slice::kNone, -1});
    }
    default: break;
  }
  return make_values(rng, shape, dt, p);
}

Shape random_shape(Rng& rng, int rank, int64_t max_dim = 5) {
  Shape s(static_cast<size_t>(rank));
  for (auto& d : s) d = rng.uniform() < 0.25 ? 1 : rng.integers(2, max_dim + 1);
  return s;
}

// A shape broadcast-compatible with s: same or lower rank, some axes set to 1.
Shape compatible_shape(Rng& rng, const Shape& s) {
  Shape t = s;
  for (auto& d : t)
    if (rng.uniform() < 0.3) d = 1;
  const int drop = static_cast<int>(rng.integers(0, static_cast<int64_t>(t.size()) + 1));
  t.erase(t.begin(), t.begin() + drop);
  return t;
}

// ---- op classification -----------------------------------------------------------------------

bool is_comparison(BinaryOp op) {
  return op >= BinaryOp::kEqual && op <= BinaryOp::kGreaterEqual;
}
bool is_logical(BinaryOp op) {
  return op >= BinaryOp::kLogicalAnd && op <= BinaryOp::kLogicalXor;
}
bool is_bitwise(BinaryOp op) {
  return op >= BinaryOp::kBitwiseAnd;
}

Profile lhs_profile(BinaryOp op) {
  return op == BinaryOp::kPower ? Profile::kPowBase : Profile::kGeneral;
}
Profile rhs_profile(BinaryOp op) {
  switch (op) {
    case BinaryOp::kDivide:
    case BinaryOp::kFloorDivide:
    case BinaryOp::kMod:
    case BinaryOp::kFmod: return Profile::kDivisor;
    case BinaryOp::kPower: return Profile::kExponent;
    case BinaryOp::kLeftShift:
    case BinaryOp::kRightShift: return Profile::kShift;
    default: return Profile::kGeneral;
  }
}

double ulp_rel(DType t) {
  switch (t) {
    case DType::kBFloat16: return 1.0 / 256;
    case DType::kFloat16: return 1.0 / 1024;
    case DType::kTFloat32: return 1.0 / 1024;
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3FN: return 1.0 / 8;
    case DType::kFloat8E5M2: return 1.0 / 4;
    default: return 0.0;
  }
}

Tol binary_tol(BinaryOp op, DType out) {
  if (op != BinaryOp::kPower) return kExact;
  return Tol{1e-6 + ulp_rel(out), 0.0};
}

// ================================================================================================
// Broadcasting
// ================================================================================================

TEST(Broadcast, ShapesMatchNumPy) {
  Rng rng(101);
  Oracle o;
  struct Case {
    Shape a, b;
    int id;
  };
  std::vector<Case> cases;
  auto add = [&](const Shape& a, const Shape& b) {
    cases.push_back({a, b, o.add({{"kind", "broadcast"}, {"shapes", {shape_json(a), shape_json(b)}}})});
  };
  add({}, {});
  add({}, {3, 1});
  add({0}, {1});
  add({0}, {3});
  add({2, 0}, {1, 1});
  add({5, 1, 4}, {3, 1});
  add({5, 2, 4}, {3, 4});
  for (int i = 0; i < 300; ++i) {
    Shape a = random_shape(rng, static_cast<int>(rng.integers(0, 5)), 4);
    Shape b = i % 3 == 0 ? random_shape(rng, static_cast<int>(rng.integers(0, 5)), 4) : compatible_shape(rng, a);
    if (rng.uniform() < 0.1 && !a.empty()) a[rng.integers(0, static_cast<int64_t>(a.size()))] = 0;
    if (rng.uniform() < 0.5) std::swap(a, b);
    add(a, b);
  }
  ASSERT_TRUE(o.run());
  int incompatible = 0;
  for (const auto& c : cases) {
    const std::string what = shape_str(c.a) + " with " + shape_str(c.b);
    if (o.failed(c.id)) {
      ++incompatible;
      EXPECT_FALSE(shapes_broadcastable(c.a, c.b)) << what << "; NumPy: " << o.error(c.id);
      EXPECT_THROW(broadcast_shapes(c.a, c.b), std::invalid_argument) << what;
      continue;
    }
    EXPECT_TRUE(shapes_broadcastable(c.a, c.b)) << what;
    const auto want = o.meta(c.id)["shape"].get<std::vector<int64_t>>();
    EXPECT_EQ(broadcast_shapes(c.a, c.b), Shape(want.begin(), want.end())) << what;
  }
  EXPECT_GT(incompatible, 10);  // the random pairs include incompatible ones
}

TEST(Broadcast, BinaryOnStridedViewsMatchesNumPy) {
  Rng rng(102);
  Oracle o;
  struct Case {
    BinaryOp op;
    Tensor a, b;
    int id;
  };
  std::vector<Case> cases;
  const BinaryOp ops[] = {BinaryOp::kAdd, BinaryOp::kSubtract, BinaryOp::kMultiply, BinaryOp::kMaximum,
                          BinaryOp::kLess};
  const std::pair<DType, DType> types[] = {{DType::kFloat32, DType::kFloat32},
                                           {DType::kInt32, DType::kInt32},
                                           {DType::kInt8, DType::kUInt8},
                                           {DType::kFloat16, DType::kFloat16}};
  for (int i = 0; i < 240; ++i) {
    const Shape full = random_shape(rng, static_cast<int>(rng.integers(0, 5)));
    Shape sa = full, sb = compatible_shape(rng, full);
    if (rng.uniform() < 0.3) sa = compatible_shape(rng, full);
    if (rng.uniform() < 0.5) std::swap(sa, sb);
    const auto [ta, tb] = types[i % 4];
    const BinaryOp op = ops[rng.integers(0, 5)];
    Tensor a = make_view(rng, sa, ta, Profile::kFinite, static_cast<int>(rng.integers(0, 6)));
    Tensor b = make_view(rng, sb, tb, Profile::kFinite, static_cast<int>(rng.integers(0, 6)));
    ASSERT_EQ(a.shape(), sa);
    ASSERT_EQ(b.shape(), sb);
    const int id = o.add(
        {{"kind", "binary"}, {"op", binary_op_name(op)}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "native"}});
    cases.push_back({op, a, b, id});
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const Tensor got = binary(c.op, c.a, c.b);
    const Tensor want = o.answer(c.id);
    EXPECT_EQ(dtype_name(got.dtype()), o.meta(c.id)["dtype"].get<std::string>());
    EXPECT_TRUE(got.is_contiguous());
    EXPECT_TRUE(tensors_match(got, want, kExact,
                              std::string(binary_op_name(c.op)) + " " + describe(c.a) + " , " + describe(c.b)));
  }
}

TEST(Broadcast, IncompatibleShapesThrow) {
  const Tensor a = Tensor::zeros({3, 4}, DType::kFloat32), b = Tensor::zeros({5}, DType::kFloat32);
  EXPECT_THROW(binary(BinaryOp::kAdd, a, b), std::invalid_argument);
  EXPECT_THROW(binary(BinaryOp::kAdd, a, Tensor::zeros({2, 4, 1}, DType::kFloat32)), std::invalid_argument);
  EXPECT_NO_THROW(binary(BinaryOp::kAdd, a, Tensor::zeros({2, 1, 4}, DType::kFloat32)));
  EXPECT_EQ(binary(BinaryOp::kAdd, a, Tensor::zeros({2, 1, 4}, DType::kFloat32)).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(binary(BinaryOp::kAdd, Tensor::zeros({0, 1}, DType::kFloat32), Tensor::zeros({3}, DType::kFloat32)).shape(),
            (Shape{0, 3}));
}

// ================================================================================================
// Binary operations
// ================================================================================================

struct BinaryCase {
  BinaryOp op;
  Tensor a, b;
  int id;
  Tol tol;
};

// Adds a case for every BinaryOp valid for (ta, tb); `mode` tells the oracle how to compute.
void add_binary_cases(Rng& rng, Oracle& o, std::vector<BinaryCase>& cases, DType ta, DType tb, const std::string& mode,
                      bool bitwise) {
  for (int k = 0; k < kNumBinaryOps; ++k) {
    const auto op = static_cast<BinaryOp>(k);
    if (is_bitwise(op) && !bitwise) continue;
    const Shape sa = random_shape(rng, static_cast<int>(rng.integers(1, 4)), 6);
    Shape sb = compatible_shape(rng, sa);
    Tensor a = make_view(rng, sa, ta, lhs_profile(op), static_cast<int>(rng.integers(0, 6)));
    Tensor b = make_view(rng, sb, tb, rhs_profile(op), static_cast<int>(rng.integers(0, 6)));
    if (rng.uniform() < 0.5 && op != BinaryOp::kPower && !is_bitwise(op)) std::swap(a, b);
    const DType rt = binary_result_dtype(op, a.dtype(), b.dtype());
    json c = {{"kind", "binary"}, {"op", binary_op_name(op)}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", mode}};
    if (mode != "native") c["rnd"] = dtype_name(rt);
    cases.push_back({op, a, b, o.add(c), binary_tol(op, rt)});
  }
}

void check_binary_cases(const Oracle& o, const std::vector<BinaryCase>& cases, bool check_numpy_dtype) {
  for (const auto& c : cases) {
    const std::string what = std::string(binary_op_name(c.op)) + "(" + describe(c.a) + ", " + describe(c.b) + ")";
    const Tensor got = binary(c.op, c.a, c.b);
    EXPECT_EQ(got.dtype(), binary_result_dtype(c.op, c.a.dtype(), c.b.dtype())) << what;
    if (check_numpy_dtype) {
      EXPECT_EQ(dtype_name(got.dtype()), o.meta(c.id)["dtype"].get<std::string>()) << what << ": NumPy's type";
    }
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), c.tol, what));
  }
}

TEST(Binary, FloatSameTypeMatchesNumPy) {
  // float32 × float32 and float16 × float16: NumPy's own float32 / float16 ufuncs (NumPy also
  // computes float16 arithmetic in float32 and rounds once).
  Rng rng(201);
  Oracle o;
  std::vector<BinaryCase> cases;
  for (int rep = 0; rep < 3; ++rep) {
    add_binary_cases(rng, o, cases, DType::kFloat32, DType::kFloat32, "native", false);
    add_binary_cases(rng, o, cases, DType::kFloat16, DType::kFloat16, "native", false);
  }
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, true);
}

TEST(Binary, FloatWithOtherTypesComputesInFloat32) {
  // NKI: (float, int) → the float, computed in float32 and rounded once. NumPy would widen
  // (float32 × int32 → float64), so the oracle computes in float32 and rounds into the NKI type.
  Rng rng(202);
  Oracle o;
  std::vector<BinaryCase> cases;
  const std::pair<DType, DType> pairs[] = {
      {DType::kFloat32, DType::kInt32},  {DType::kFloat32, DType::kUInt8},  {DType::kFloat32, DType::kFloat16},
      {DType::kFloat32, DType::kBool},   {DType::kFloat16, DType::kInt8},   {DType::kFloat16, DType::kInt32},
      {DType::kFloat16, DType::kUInt16}, {DType::kFloat32, DType::kUInt32}, {DType::kFloat32, DType::kBFloat16}};
  for (const auto& [ta, tb] : pairs) add_binary_cases(rng, o, cases, ta, tb, "f32", false);
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, false);
}

TEST(Binary, IntegerPairsMatchNumPy) {
  // Pairs whose promotion NumPy shares: NumPy's own integer ufuncs (wrap-around, x // 0 = 0,
  // x % 0 = 0, shifts by >= the width give 0 or -1), and the NumPy result type must agree.
  Rng rng(203);
  Oracle o;
  std::vector<BinaryCase> cases;
  const std::pair<DType, DType> pairs[] = {
      {DType::kInt8, DType::kInt8},    {DType::kInt16, DType::kInt16},   {DType::kInt32, DType::kInt32},
      {DType::kUInt8, DType::kUInt8},  {DType::kUInt16, DType::kUInt16}, {DType::kUInt32, DType::kUInt32},
      {DType::kInt8, DType::kUInt8},   {DType::kInt16, DType::kInt32},   {DType::kUInt8, DType::kUInt16},
      {DType::kInt8, DType::kUInt16},  {DType::kInt16, DType::kUInt8},   {DType::kUInt16, DType::kUInt32},
      {DType::kInt32, DType::kUInt16}, {DType::kBool, DType::kInt8},     {DType::kUInt8, DType::kBool}};
  for (int rep = 0; rep < 1; ++rep)
    for (const auto& [ta, tb] : pairs) {
      // Division gives float32 in NKI and float64 in NumPy: that op is checked in float32 below.
      std::vector<BinaryCase> batch;
      add_binary_cases(rng, o, batch, ta, tb, "native", true);
      for (auto& c : batch)
        if (c.op != BinaryOp::kDivide) cases.push_back(c);
    }
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, true);
}

TEST(Binary, IntegerPairsOutsideNumPyRules) {
  // Integer division → float32; (int32, uint32) and (int8, uint32) → float32 in NKI (int64 in
  // NumPy): computed exactly in int64 and rounded once to float32. Oracle: int64 / float32 math.
  Rng rng(204);
  Oracle o;
  std::vector<BinaryCase> cases;
  for (DType t : {DType::kInt8, DType::kInt32, DType::kUInt32, DType::kUInt8, DType::kBool}) {
    const Shape s = random_shape(rng, 2, 8);
    Tensor a = make_view(rng, s, t, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
    Tensor b = make_view(rng, s, t, Profile::kDivisor, static_cast<int>(rng.integers(0, 6)));
    const int id = o.add({{"kind", "binary"},
                          {"op", "divide"},
                          {"a", o.input(a)},
                          {"b", o.input(b)},
                          {"mode", "f32"},
                          {"rnd", "float32"}});
    cases.push_back({BinaryOp::kDivide, a, b, id, kExact});
  }
  for (int k = 0; k < kNumBinaryOps; ++k) {
    const auto op = static_cast<BinaryOp>(k);
    if (op == BinaryOp::kDivide || is_bitwise(op)) continue;  // bitwise: see BitwiseOnInt32UInt32
    for (const auto& [ta, tb] : {std::pair{DType::kInt32, DType::kUInt32}, std::pair{DType::kInt8, DType::kUInt32}}) {
      const Shape s = random_shape(rng, 2, 8);
      // Keep products and powers inside int64 so that NumPy's int64 does not overflow either.
      const Profile pa = op == BinaryOp::kPower ? Profile::kPowBase : Profile::kGeneral;
      Tensor a = make_view(rng, s, ta, pa, static_cast<int>(rng.integers(0, 6)));
      Tensor b = make_view(rng, compatible_shape(rng, s), tb, rhs_profile(op), static_cast<int>(rng.integers(0, 6)));
      const int id = o.add({{"kind", "binary"},
                            {"op", binary_op_name(op)},
                            {"a", o.input(a)},
                            {"b", o.input(b)},
                            {"mode", "i64"},
                            {"rnd", dtype_name(binary_result_dtype(op, ta, tb))}});
      cases.push_back({op, a, b, id, kExact});
    }
  }
  // bool × bool arithmetic gives uint8 in NKI (NumPy: bool, or an error for subtract).
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSubtract, BinaryOp::kMultiply, BinaryOp::kFloorDivide, BinaryOp::kMod,
                      BinaryOp::kPower}) {
    Tensor a = make_values(rng, {3, 4}, DType::kBool, Profile::kGeneral);
    Tensor b = make_values(rng, {4}, DType::kBool, Profile::kGeneral);
    const int id = o.add({{"kind", "binary"},
                          {"op", binary_op_name(op)},
                          {"a", o.input(a)},
                          {"b", o.input(b)},
                          {"mode", "i64"},
                          {"rnd", "uint8"}});
    cases.push_back({op, a, b, id, kExact});
  }
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, false);
}

TEST(Binary, BoolPairsMatchNumPy) {
  // Where NumPy's bool × bool rules and NKI's agree: comparisons, logical and bitwise ops, max/min.
  Rng rng(205);
  Oracle o;
  std::vector<BinaryCase> cases;
  for (int k = 0; k < kNumBinaryOps; ++k) {
    const auto op = static_cast<BinaryOp>(k);
    if (!(is_comparison(op) || is_logical(op) || op == BinaryOp::kBitwiseAnd || op == BinaryOp::kBitwiseOr ||
          op == BinaryOp::kBitwiseXor || op == BinaryOp::kMaximum || op == BinaryOp::kMinimum))
      continue;
    Tensor a = make_view(rng, {4, 5}, DType::kBool, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
    Tensor b = make_view(rng, {5}, DType::kBool, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
    const int id = o.add(
        {{"kind", "binary"}, {"op", binary_op_name(op)}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "native"}});
    cases.push_back({op, a, b, id, kExact});
  }
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, true);
}

TEST(Binary, DivisionFamilyEdgeCases) {
  // Exhaustive small grids: signs, zero divisors, the most negative value over -1, and float
  // specials, for divide / floor_divide / mod / fmod.
  Oracle o;
  std::vector<BinaryCase> cases;
  const BinaryOp ops[] = {BinaryOp::kDivide, BinaryOp::kFloorDivide, BinaryOp::kMod, BinaryOp::kFmod};
  for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kUInt8, DType::kUInt32}) {
    const IntRange r = int_dtype_range(t);
    std::vector<int64_t> xs = {r.lo, r.lo + 1, r.hi, r.hi - 1};
    for (int64_t v = -9; v <= 9; ++v) xs.push_back(std::clamp<int64_t>(v, r.lo, r.hi));
    std::vector<int64_t> ys = {r.lo, r.hi, 0, 1, -1, 2, -2, 3, -3, 7, -7};
    for (auto& y : ys) y = std::clamp(y, r.lo, r.hi);
    Tensor a = Tensor::from_i64({static_cast<int64_t>(xs.size()), 1}, xs, t);
    Tensor b = Tensor::from_i64({static_cast<int64_t>(ys.size())}, ys, t);
    for (BinaryOp op : ops) {
      json c = {{"kind", "binary"}, {"op", binary_op_name(op)}, {"a", o.input(a)}, {"b", o.input(b)}};
      if (op == BinaryOp::kDivide) {
        c["mode"] = "f32";
        c["rnd"] = "float32";
      } else {
        c["mode"] = "native";
      }
      cases.push_back({op, a, b, o.add(c), kExact});
    }
  }
  for (DType t : {DType::kFloat32, DType::kFloat16}) {
    std::vector<float> xs = {0.0f,  -0.0f,  1.0f, -1.0f, 7.5f, -7.5f, 6.0f,  -6.0f, 1e-3f, -1e-3f,
                             1e10f, -1e10f, kInf, -kInf, kNaN, 5.0f,  -5.0f, 0.1f,  -0.1f};
    std::vector<float> ys = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f, 0.1f, -0.1f, 2.5f, kInf, -kInf, kNaN};
    Tensor a = Tensor::from_f32({static_cast<int64_t>(xs.size()), 1}, xs, t);
    Tensor b = Tensor::from_f32({static_cast<int64_t>(ys.size())}, ys, t);
    for (BinaryOp op : ops)
      cases.push_back({op, a, b,
                       o.add({{"kind", "binary"},
                              {"op", binary_op_name(op)},
                              {"a", o.input(a)},
                              {"b", o.input(b)},
                              {"mode", "native"}}),
                       kExact});
  }
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, false);
}

TEST(Binary, DirectExpectations) {
  auto i32 = [](std::vector<int64_t> v) {
    return Tensor::from_i64({static_cast<int64_t>(v.size())}, v, DType::kInt32);
  };
  auto f32 = [](std::vector<float> v) { return Tensor::from_f32({static_cast<int64_t>(v.size())}, v); };
  // Integer floor division / modulo: Python semantics, zero divisors give 0.
  EXPECT_EQ(binary(BinaryOp::kFloorDivide, i32({7, -7, 7, -7, 5}), i32({2, 2, -2, -2, 0})).to_i64_vector(),
            (std::vector<int64_t>{3, -4, -4, 3, 0}));
  EXPECT_EQ(binary(BinaryOp::kMod, i32({7, -7, 7, -7, 5}), i32({2, 2, -2, -2, 0})).to_i64_vector(),
            (std::vector<int64_t>{1, 1, -1, -1, 0}));
  EXPECT_EQ(binary(BinaryOp::kFmod, i32({7, -7, 7, -7, 5}), i32({2, 2, -2, -2, 0})).to_i64_vector(),
            (std::vector<int64_t>{1, -1, 1, -1, 0}));
  // Division of integers gives float32.
  const Tensor q = binary(BinaryOp::kDivide, i32({1, -3, 0}), i32({4, 0, 0}));
  EXPECT_EQ(q.dtype(), DType::kFloat32);
  const auto qv = q.to_f32_vector();
  EXPECT_EQ(qv[0], 0.25f);
  EXPECT_EQ(qv[1], -kInf);
  EXPECT_TRUE(std::isnan(qv[2]));
  // int8 wraps.
  const Tensor w = binary(BinaryOp::kAdd, Tensor::from_i64({2}, std::vector<int64_t>{127, -128}, DType::kInt8),
                          Tensor::from_i64({2}, std::vector<int64_t>{1, -1}, DType::kInt8));
  EXPECT_EQ(w.to_i64_vector(), (std::vector<int64_t>{-128, 127}));
  // maximum / minimum propagate NaN from either side.
  const auto mx = binary(BinaryOp::kMaximum, f32({kNaN, 1.0f, 2.0f}), f32({1.0f, kNaN, 1.0f})).to_f32_vector();
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 2.0f);
  const auto mn = binary(BinaryOp::kMinimum, f32({kNaN, 1.0f, 2.0f}), f32({1.0f, kNaN, 1.0f})).to_f32_vector();
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mn[2], 1.0f);
  // Comparisons with NaN.
  EXPECT_EQ(binary(BinaryOp::kEqual, f32({kNaN}), f32({kNaN})).to_i64_vector(), (std::vector<int64_t>{0}));
  EXPECT_EQ(binary(BinaryOp::kNotEqual, f32({kNaN}), f32({kNaN})).to_i64_vector(), (std::vector<int64_t>{1}));
  // Arithmetic right shift of negatives; shifts past the width.
  EXPECT_EQ(binary(BinaryOp::kRightShift, i32({-8, -8, 8}), i32({1, 40, 40})).to_i64_vector(),
            (std::vector<int64_t>{-4, -1, 0}));
  EXPECT_EQ(binary(BinaryOp::kLeftShift, i32({1, 1, 3}), i32({31, 32, 1})).to_i64_vector(),
            (std::vector<int64_t>{INT32_MIN, 0, 6}));
  // Bitwise ops refuse floats.
  EXPECT_THROW(binary(BinaryOp::kBitwiseAnd, f32({1.0f}), i32({1})), std::invalid_argument);
  EXPECT_THROW(binary(BinaryOp::kLeftShift, i32({1}), f32({1.0f})), std::invalid_argument);
  // out_dtype: computed in float32, stored once in the requested type.
  const Tensor o8 =
      binary(BinaryOp::kMultiply, f32({2.75f, -2.75f, 1000.0f, kNaN}), f32({1.0f, 1.0f, 1.0f, 1.0f}), DType::kInt8);
  EXPECT_EQ(o8.dtype(), DType::kInt8);
  EXPECT_EQ(o8.to_i64_vector(), (std::vector<int64_t>{2, -2, 127, 0}));  // truncate, saturate, NaN → 0
}

TEST(Binary, FloatModuloZeroTakesTheDivisorsSign) {
  // ops.h: kMod is "Python/NumPy remainder: sign of the divisor". Python: -4.0 % 2.0 == 0.0 and
  // 4.0 % -2.0 == -0.0; NumPy's remainder returns copysign(0, b) for a zero result.
  Oracle o;
  const Tensor a = Tensor::from_f32({4}, std::vector<float>{-4.0f, 4.0f, -0.0f, 0.0f});
  const Tensor b = Tensor::from_f32({4}, std::vector<float>{2.0f, -2.0f, 3.0f, -3.0f});
  const int id = o.add({{"kind", "binary"}, {"op", "mod"}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "native"}});
  ASSERT_TRUE(o.run());
  const auto got = binary(BinaryOp::kMod, a, b).to_f32_vector();
  const auto want = o.answer(id).to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], 0.0f);
    EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i]))
        << "mod(" << a.to_f32_vector()[i] << ", " << b.to_f32_vector()[i] << ") = " << got[i] << ", NumPy " << want[i];
  }
}

TEST(Binary, NarrowFloatResultsAreTheFloat32ResultRoundedOnce) {
  // bfloat16 and float8 operands: the result equals the float32 operation on the widened values,
  // rounded to nearest even into the result type (rounding written in the oracle with NumPy bit
  // operations and frexp). Also out_dtype overrides from float32 operands.
  Rng rng(206);
  Oracle o;
  std::vector<BinaryCase> cases;
  const std::pair<DType, DType> pairs[] = {
      {DType::kBFloat16, DType::kBFloat16},     {DType::kBFloat16, DType::kInt32},
      {DType::kFloat8E4M3, DType::kFloat8E4M3}, {DType::kFloat8E4M3FN, DType::kFloat8E4M3FN},
      {DType::kFloat8E5M2, DType::kFloat8E5M2}, {DType::kFloat8E4M3, DType::kFloat8E5M2},
      {DType::kFloat8E5M2, DType::kFloat16},    {DType::kFloat8E4M3FN, DType::kBFloat16},
      {DType::kTFloat32, DType::kTFloat32},     {DType::kTFloat32, DType::kBFloat16},
      {DType::kFloat16, DType::kBFloat16},      {DType::kTFloat32, DType::kInt16}};
  for (const auto& [ta, tb] : pairs) add_binary_cases(rng, o, cases, ta, tb, "f32", false);
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, false);

  // out_dtype: float32 operands, result stored once as a narrow type.
  Oracle o2;
  struct OutCase {
    BinaryOp op;
    Tensor a, b;
    DType out;
    int id;
  };
  std::vector<OutCase> outs;
  for (DType out : {DType::kBFloat16, DType::kFloat16, DType::kTFloat32, DType::kFloat8E4M3, DType::kFloat8E4M3FN,
                    DType::kFloat8E5M2, DType::kInt8, DType::kUInt16, DType::kInt32}) {
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMultiply, BinaryOp::kDivide}) {
      Tensor a = make_values(rng, {64}, DType::kFloat32, Profile::kGeneral);
      Tensor b = make_values(rng, {64}, DType::kFloat32, Profile::kDivisor);
      const int id = o2.add({{"kind", "binary"},
                             {"op", binary_op_name(op)},
                             {"a", o2.input(a)},
                             {"b", o2.input(b)},
                             {"mode", "f32"},
                             {"rnd", dtype_name(out)}});
      outs.push_back({op, a, b, out, id});
    }
  }
  ASSERT_TRUE(o2.run());
  for (const auto& c : outs) {
    const Tensor got = binary(c.op, c.a, c.b, c.out);
    EXPECT_EQ(got.dtype(), c.out);
    EXPECT_TRUE(tensors_match(got, o2.answer(c.id), kExact,
                              std::string(binary_op_name(c.op)) + " float32 → " + std::string(dtype_name(c.out))));
  }
}

TEST(Binary, BitwiseOnInt32UInt32) {
  // (int32, uint32) promotes to float32 (dtype.h); bitwise ops on that pair are computed on the
  // integers in int64 and their result stored as float32. Checked here against int64 math.
  Oracle o;
  const Tensor a = Tensor::from_i64({4}, std::vector<int64_t>{-1, 5, -8, 12}, DType::kInt32);
  const Tensor b = Tensor::from_i64({4}, std::vector<int64_t>{0xF0, 3, 1, 4000000000}, DType::kUInt32);
  std::vector<BinaryCase> cases;
  for (BinaryOp op : {BinaryOp::kBitwiseAnd, BinaryOp::kBitwiseOr, BinaryOp::kBitwiseXor}) {
    const int id = o.add({{"kind", "binary"},
                          {"op", binary_op_name(op)},
                          {"a", o.input(a)},
                          {"b", o.input(b)},
                          {"mode", "i64"},
                          {"rnd", dtype_name(binary_result_dtype(op, a.dtype(), b.dtype()))}});
    cases.push_back({op, a, b, id, kExact});
  }
  ASSERT_TRUE(o.run());
  check_binary_cases(o, cases, false);
}

TEST(BinaryInto, WritesStridedViewsOfAnyDtypeAndLeavesTheRestAlone) {
  // binary_into(op, a, b, out) equals binary(op, a, b, out.dtype()) (checked against NumPy above)
  // for destinations of every layout and type; elements of the base outside `out` keep their value.
  Rng rng(207);
  const BinaryOp ops[] = {BinaryOp::kAdd,  BinaryOp::kDivide,   BinaryOp::kFloorDivide, BinaryOp::kMaximum,
                          BinaryOp::kLess, BinaryOp::kMultiply, BinaryOp::kSubtract};
  const DType out_types[] = {DType::kFloat32, DType::kBFloat16, DType::kInt16,
                             DType::kFloat16, DType::kUInt8,    DType::kFloat8E5M2};
  for (int i = 0; i < 120; ++i) {
    const Shape shape = random_shape(rng, static_cast<int>(rng.integers(1, 4)));
    const BinaryOp op = ops[i % 7];
    const DType ta = i % 3 ? DType::kFloat32 : DType::kInt32, tb = i % 4 ? DType::kFloat32 : DType::kInt8;
    const Tensor a = make_view(rng, shape, ta, Profile::kFinite, static_cast<int>(rng.integers(0, 6)));
    const Tensor b =
        make_view(rng, compatible_shape(rng, shape), tb, Profile::kDivisor, static_cast<int>(rng.integers(0, 6)));
    // The destination: a view of a larger base (kinds 0, 1, 2, 4, 5 — never a broadcast).
    const int kinds[] = {0, 1, 2, 4, 5};
    const DType ot = out_types[i % 6];
    Tensor out = make_view(rng, shape, ot, Profile::kFinite, kinds[rng.integers(0, 5)]);
    const Tensor base_before = Tensor(out.storage(), ot, {out.storage()->nbytes() / dtype_size(ot)}, {1}, 0).copy();
    binary_into(op, a, b, out);
    const std::string what = std::string(binary_op_name(op)) + " into " + describe(out);
    EXPECT_TRUE(tensors_match(out, binary(op, a, b, ot), kExact, what));
    // Everything outside the view is unchanged: mark the view's elements in a copy of the base.
    Tensor after = Tensor(out.storage(), ot, {out.storage()->nbytes() / dtype_size(ot)}, {1}, 0).copy();
    Tensor marker = Tensor(after.storage(), ot, out.shape(), out.strides(), out.offset());
    marker.assign(Tensor(base_before.storage(), ot, out.shape(), out.strides(), out.offset()));
    EXPECT_TRUE(tensors_match(after, base_before, kExact, what + ": elements outside the view"));
  }
}

TEST(BinaryInto, InPlaceOnTheSameViewAndShapeErrors) {
  // out may alias an operand when they are the same view (ops.h): a += b on strided views.
  Rng rng(208);
  for (int kind : {0, 1, 2, 4, 5}) {
    for (DType t : {DType::kFloat32, DType::kInt32, DType::kBFloat16}) {
      Tensor a = make_view(rng, {4, 6, 3}, t, Profile::kFinite, kind);
      const Tensor b = make_values(rng, {6, 1}, t, Profile::kFinite);
      const Tensor want = binary(BinaryOp::kSubtract, a, b, t);
      binary_into(BinaryOp::kSubtract, a, b, a);
      EXPECT_TRUE(tensors_match(a, want, kExact, "a -= b in place, " + describe(a)));
      const Tensor want2 = binary(BinaryOp::kMultiply, b, a, t);
      binary_into(BinaryOp::kMultiply, b, a, a);  // the aliased operand on the right
      EXPECT_TRUE(tensors_match(a, want2, kExact, "a = b * a in place, " + describe(a)));
      const Tensor want3 = unary(UnaryOp::kNegative, a, t);
      unary_into(UnaryOp::kNegative, a, a);
      EXPECT_TRUE(tensors_match(a, want3, kExact, "a = -a in place, " + describe(a)));
    }
  }
  Tensor out = Tensor::zeros({3, 4}, DType::kFloat32);
  const Tensor x = Tensor::zeros({3, 4}, DType::kFloat32), row = Tensor::zeros({4}, DType::kFloat32);
  EXPECT_NO_THROW(binary_into(BinaryOp::kAdd, x, row, out));
  Tensor small = Tensor::zeros({4}, DType::kFloat32);
  EXPECT_THROW(binary_into(BinaryOp::kAdd, x, row, small), std::invalid_argument);  // not the broadcast shape
  Tensor big = Tensor::zeros({2, 3, 4}, DType::kFloat32);
  EXPECT_THROW(binary_into(BinaryOp::kAdd, x, row, big), std::invalid_argument);
  EXPECT_THROW(binary_into(BinaryOp::kAdd, x, Tensor::zeros({5}, DType::kFloat32), out), std::invalid_argument);
  EXPECT_THROW(binary_into(BinaryOp::kBitwiseOr, x, x, out), std::invalid_argument);
  EXPECT_THROW(unary_into(UnaryOp::kExp, x, small), std::invalid_argument);
  EXPECT_THROW(unary_into(UnaryOp::kInvert, x, out), std::invalid_argument);
  // unary_into stores into the destination's type, computed in float32 and rounded once.
  Tensor o16 = Tensor::zeros({3}, DType::kInt16);
  unary_into(UnaryOp::kSqrt, Tensor::from_f32({3}, std::vector<float>{10.0f, 1e12f, -1.0f}), o16);
  EXPECT_EQ(o16.to_i64_vector(), (std::vector<int64_t>{3, 32767, 0}));  // trunc, saturate, NaN → 0
}

// ================================================================================================
// Type promotion
// ================================================================================================

bool is_fp8(DType t) {
  return t == DType::kFloat8E4M3 || t == DType::kFloat8E4M3FN || t == DType::kFloat8E5M2;
}

// An independent model of dtype.h's promotion rules (written from its comment, not its table).
DType model_promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool fa = dtype_is_float(a), fb = dtype_is_float(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    if (a == DType::kFloat32 || b == DType::kFloat32) return DType::kFloat32;
    if (a == DType::kTFloat32 || b == DType::kTFloat32) return DType::kTFloat32;
    auto has = [&](DType t) { return a == t || b == t; };
    if (has(DType::kFloat16) && has(DType::kBFloat16)) return DType::kFloat32;
    if (has(DType::kFloat16)) return DType::kFloat16;    // with an fp8
    if (has(DType::kBFloat16)) return DType::kBFloat16;  // with an fp8
    return DType::kBFloat16;                             // two different fp8 formats
  }
  // Integers: the narrowest type covering both ranges, signed when either is signed; none → f32.
  const IntRange ra = int_dtype_range(a), rb = int_dtype_range(b);
  const bool is_signed = dtype_is_signed(a) || dtype_is_signed(b);
  const std::vector<DType> candidates = is_signed ? std::vector<DType>{DType::kInt8, DType::kInt16, DType::kInt32}
                                                  : std::vector<DType>{DType::kUInt8, DType::kUInt16, DType::kUInt32};
  for (DType c : candidates) {
    const IntRange rc = int_dtype_range(c);
    if (rc.lo <= std::min(ra.lo, rb.lo) && rc.hi >= std::max(ra.hi, rb.hi)) return c;
  }
  return DType::kFloat32;
}

TEST(Promotion, PromoteTypesFollowsTheNkiRules) {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      EXPECT_EQ(promote_types(a, b), model_promote(a, b)) << dtype_name(a) << " × " << dtype_name(b);
      EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << dtype_name(a) << " × " << dtype_name(b);
    }
  // The examples dtype.h spells out.
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kFloat8E4M3, DType::kFloat8E5M2), DType::kBFloat16);
  EXPECT_EQ(promote_types(DType::kFloat8E4M3, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kFloat8E5M2, DType::kBFloat16), DType::kBFloat16);
  EXPECT_EQ(promote_types(DType::kTFloat32, DType::kFloat32), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kTFloat32, DType::kBFloat16), DType::kTFloat32);
  EXPECT_EQ(promote_types(DType::kInt8, DType::kUInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kInt8, DType::kUInt16), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kInt32, DType::kUInt32), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kInt32), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kBool, DType::kUInt16), DType::kUInt16);
}

// What binary() must return for (op, a, b): the promoted type, bool for comparisons and logical
// ops, float32 for integer true division; bitwise ops refuse floats (nullopt). bool × bool
// arithmetic gives uint8 (as a Python bool scalar does, dtype.h scalar_dtype), except max / min.
std::optional<DType> expected_binary_dtype(BinaryOp op, DType a, DType b) {
  if (is_comparison(op) || is_logical(op)) return DType::kBool;
  const DType p = model_promote(a, b);
  if (is_bitwise(op)) {
    if (dtype_is_float(a) || dtype_is_float(b)) return std::nullopt;
    return p;
  }
  if (op == BinaryOp::kDivide && !dtype_is_float(p)) return DType::kFloat32;
  if (p == DType::kBool && op != BinaryOp::kMaximum && op != BinaryOp::kMinimum) return DType::kUInt8;
  return p;
}

TEST(Promotion, BinaryResultDtypesForAllPairs) {
  for (int k = 0; k < kNumBinaryOps; ++k) {
    const auto op = static_cast<BinaryOp>(k);
    for (DType ta : kAllDTypes)
      for (DType tb : kAllDTypes) {
        const std::string what = std::string(binary_op_name(op)) + "(" + std::string(dtype_name(ta)) + ", " +
                                 std::string(dtype_name(tb)) + ")";
        const Tensor a = Tensor::full({2}, ta, 1.0), b = Tensor::full({1}, tb, 1.0);
        const auto want = expected_binary_dtype(op, ta, tb);
        if (!want) {
          EXPECT_THROW(binary_result_dtype(op, ta, tb), std::invalid_argument) << what;
          EXPECT_THROW(binary(op, a, b), std::invalid_argument) << what;
          continue;
        }
        EXPECT_EQ(binary_result_dtype(op, ta, tb), *want) << what;
        const Tensor r = binary(op, a, b);
        EXPECT_EQ(r.dtype(), *want) << what;
        EXPECT_EQ(r.shape(), (Shape{2})) << what;
      }
  }
}

TEST(Promotion, AgreesWithNumPyWhereTheRulesCoincide) {
  // NumPy's result_type over the 9 types NumPy has. They must agree except (a) where NumPy needs a
  // 64-bit type (NKI has none) and (b) float × integer, where NKI keeps the float and NumPy may
  // widen it (float16 × int16 → float32 in NumPy): there NumPy's answer must be a float at least
  // as wide as NKI's.
  const std::vector<DType> numpy_types = {DType::kFloat32, DType::kFloat16, DType::kInt8,
                                          DType::kInt16,   DType::kInt32,   DType::kUInt8,
                                          DType::kUInt16,  DType::kUInt32,  DType::kBool};
  Oracle o;
  json pairs = json::array();
  for (DType a : numpy_types)
    for (DType b : numpy_types) pairs.push_back({dtype_name(a), dtype_name(b)});
  const int id = o.add({{"kind", "result_type"}, {"pairs", pairs}});
  ASSERT_TRUE(o.run());
  const auto types = o.meta(id)["types"].get<std::vector<std::string>>();
  ASSERT_EQ(types.size(), numpy_types.size() * numpy_types.size());
  int compared = 0;
  size_t i = 0;
  for (DType a : numpy_types)
    for (DType b : numpy_types) {
      const std::string& np = types[i++];
      const std::string nki(dtype_name(promote_types(a, b)));
      const std::string what = std::string(dtype_name(a)) + " × " + std::string(dtype_name(b));
      if (np == "int64" || np == "float64") continue;
      const bool mixed = dtype_is_float(a) != dtype_is_float(b) && a != DType::kBool && b != DType::kBool;
      if (mixed) {
        EXPECT_EQ(nki, dtype_name(dtype_is_float(a) ? a : b)) << what;
        EXPECT_TRUE(np == nki || np == "float32") << what << ": NumPy " << np << ", NKI " << nki;
        continue;
      }
      EXPECT_EQ(nki, np) << what;
      ++compared;
    }
  EXPECT_GE(compared, 50);
}

// ================================================================================================
// Unary operations
// ================================================================================================

struct UnarySpec {
  const char* mode;  // oracle mode for float32 inputs
  Tol tol;
  double lo, hi;   // input range
  bool log_range;  // draw |x| log-uniformly in [lo, hi] (positive domain)
};

UnarySpec unary_spec(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNegative:
    case UnaryOp::kAbs:
    case UnaryOp::kSign:
    case UnaryOp::kSquare:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kTrunc:
    case UnaryOp::kRint:
    case UnaryOp::kRelu:
    case UnaryOp::kLogicalNot: return {"native", kExact, -100, 100, false};
    case UnaryOp::kReciprocal:
    case UnaryOp::kSqrt: return {"native", kExact, 1e-6, 1e6, true};
    case UnaryOp::kRsqrt: return {"f64", {3e-7, 0}, 1e-6, 1e6, true};
    case UnaryOp::kExp: return {"f64", {1e-6, 1e-30}, -87, 88, false};
    case UnaryOp::kLog: return {"f64", {1e-6, 1e-30}, 1e-30, 1e30, true};
    case UnaryOp::kSin:
    case UnaryOp::kCos: return {"f64", {1e-6, 1e-30}, -10, 10, false};
    case UnaryOp::kTan: return {"f64", {1e-6, 1e-30}, -1.5, 1.5, false};
    case UnaryOp::kTanh: return {"f64", {1e-6, 1e-30}, -10, 10, false};
    case UnaryOp::kArctan: return {"f64", {1e-6, 1e-30}, -100, 100, false};
    case UnaryOp::kErf: return {"f64", {1e-6, 1e-30}, -5, 5, false};
    case UnaryOp::kSigmoid:
    case UnaryOp::kSilu:
    case UnaryOp::kSoftplus: return {"f64", {1e-6, 1e-30}, -30, 30, false};
    case UnaryOp::kMish:
    case UnaryOp::kGeluDx:
    case UnaryOp::kSiluDx:
    case UnaryOp::kErfDx: return {"f64", {1e-5, 1e-6}, -6, 6, false};
    case UnaryOp::kGelu:
    case UnaryOp::kGeluTanh:
    case UnaryOp::kGeluSigmoid: return {"f64", {1e-5, 1e-6}, -6, 6, false};
    case UnaryOp::kInvert: break;
  }
  return {"native", kExact, -1, 1, false};
}

std::vector<float> unary_inputs(Rng& rng, const UnarySpec& s, int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) {
    if (s.log_range) {
      const double e = std::log(s.lo) + rng.uniform() * (std::log(s.hi) - std::log(s.lo));
      v.push_back(static_cast<float>(std::exp(e)));
    } else {
      v.push_back(static_cast<float>(s.lo + rng.uniform() * (s.hi - s.lo)));
    }
  }
  // Halfway cases for rint, small integers, and the special values.
  for (float x : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.0f, -3.0f, 1.0f, 0.0f, -0.0f, kInf, -kInf, kNaN, 1e-40f,
                  -1e-40f, 1e-20f, -1e-20f})
    v.push_back(x);
  return v;
}

TEST(Unary, Float32MatchesNumPy) {
  Rng rng(301);
  Oracle o;
  struct Case {
    UnaryOp op;
    Tensor a;
    int id;
    Tol tol;
  };
  std::vector<Case> cases;
  for (int k = 0; k < kNumUnaryOps; ++k) {
    const auto op = static_cast<UnaryOp>(k);
    if (op == UnaryOp::kInvert) continue;
    const UnarySpec s = unary_spec(op);
    const std::vector<float> v = unary_inputs(rng, s, 1500);
    Tensor a = Tensor::from_f32({static_cast<int64_t>(v.size())}, v);
    // Half of the ops see the input through a reversed view.
    if (k % 2) a = a.slice(0, Slice{Slice::kNone, Slice::kNone, -1});
    json c = {{"kind", "unary"}, {"op", unary_op_name(op)}, {"a", o.input(a)}, {"mode", s.mode}};
    if (op != UnaryOp::kLogicalNot) c["rnd"] = "float32";
    const int id = o.add(c);
    cases.push_back({op, a, id, s.tol});
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const Tensor got = unary(c.op, c.a);
    EXPECT_EQ(got.dtype(), c.op == UnaryOp::kLogicalNot ? DType::kBool : DType::kFloat32);
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), c.tol, std::string(unary_op_name(c.op)) + " float32"));
  }
  EXPECT_THROW(unary(UnaryOp::kInvert, Tensor::zeros({2}, DType::kFloat32)), std::invalid_argument);
}

TEST(Unary, Float16MatchesNumPy) {
  // float16 in, float16 out: computed in float32 and rounded once. The exact ops against NumPy's
  // float16 ufuncs; the others against the float64 formula rounded to float16 (1 ulp allowed for
  // the double rounding).
  Rng rng(302);
  Oracle o;
  struct Case {
    UnaryOp op;
    Tensor a;
    int id;
    Tol tol;
  };
  std::vector<Case> cases;
  for (int k = 0; k < kNumUnaryOps; ++k) {
    const auto op = static_cast<UnaryOp>(k);
    if (op == UnaryOp::kInvert) continue;
    UnarySpec s = unary_spec(op);
    if (op == UnaryOp::kExp) s.lo = -15, s.hi = 11;  // keep results inside float16's range
    if (op == UnaryOp::kLog) s.lo = 1e-7, s.hi = 6e4;
    if (op == UnaryOp::kReciprocal || op == UnaryOp::kSqrt || op == UnaryOp::kRsqrt) s.lo = 1e-4, s.hi = 6e4;
    const std::vector<float> v = unary_inputs(rng, s, 800);
    const Tensor a = Tensor::from_f32({static_cast<int64_t>(v.size())}, v, DType::kFloat16);
    const bool exact = std::string(s.mode) == "native";
    json c = {{"kind", "unary"}, {"op", unary_op_name(op)}, {"a", o.input(a)}, {"mode", exact ? "native" : "f64"}};
    if (op != UnaryOp::kLogicalNot) c["rnd"] = "float16";
    const int id = o.add(c);
    Tol tol = exact ? kExact : Tol{1e-6 + 1.0 / 1024, 1e-7};
    if (op == UnaryOp::kGelu || op == UnaryOp::kGeluTanh || op == UnaryOp::kGeluSigmoid || op == UnaryOp::kMish ||
        op == UnaryOp::kGeluDx || op == UnaryOp::kSiluDx || op == UnaryOp::kErfDx)
      tol.atol = s.tol.atol;  // float32 cancellation
    cases.push_back({op, a, id, tol});
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const Tensor got = unary(c.op, c.a);
    EXPECT_EQ(got.dtype(), c.op == UnaryOp::kLogicalNot ? DType::kBool : DType::kFloat16);
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), c.tol, std::string(unary_op_name(c.op)) + " float16"));
  }
}

TEST(Unary, NarrowFloatsRoundTheFloat32ResultOnce) {
  // unary(op, x) on bfloat16 / float8 equals unary(op, x as float32) rounded (by NumPy, RNE) into
  // the narrow type: a single rounding of the float32 engine result.
  Rng rng(303);
  Oracle o;
  struct Case {
    UnaryOp op;
    Tensor a;
    int id;
  };
  std::vector<Case> cases;
  for (DType t : {DType::kBFloat16, DType::kTFloat32, DType::kFloat8E4M3, DType::kFloat8E4M3FN, DType::kFloat8E5M2}) {
    for (int k = 0; k < kNumUnaryOps; ++k) {
      const auto op = static_cast<UnaryOp>(k);
      if (op == UnaryOp::kInvert || op == UnaryOp::kLogicalNot) continue;
      const UnarySpec s = unary_spec(op);
      const std::vector<float> v = unary_inputs(rng, s, 200);
      const Tensor a = Tensor::from_f32({static_cast<int64_t>(v.size())}, v, t);
      const Tensor f = unary(op, a.astype(DType::kFloat32));
      const int id = o.add({{"kind", "round"}, {"a", o.input(f)}, {"rnd", dtype_name(t)}});
      cases.push_back({op, a, id});
    }
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const Tensor got = unary(c.op, c.a);
    EXPECT_EQ(got.dtype(), c.a.dtype());
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), kExact,
                              std::string(unary_op_name(c.op)) + " " + std::string(dtype_name(c.a.dtype()))));
  }
}

TEST(Unary, IntegersMatchNumPy) {
  // Ops that keep integers stay in the input type (exact, wrapping like NumPy); the others give
  // float32 computed from the float32 value of the input.
  Rng rng(304);
  Oracle o;
  struct Case {
    UnaryOp op;
    Tensor a;
    int id;
    Tol tol;
    DType want;
  };
  std::vector<Case> cases;
  const std::vector<DType> ints = {DType::kInt8,  DType::kInt16,  DType::kInt32,
                                   DType::kUInt8, DType::kUInt16, DType::kUInt32};
  for (DType t : ints) {
    for (int k = 0; k < kNumUnaryOps; ++k) {
      const auto op = static_cast<UnaryOp>(k);
      const UnarySpec s = unary_spec(op);
      json c = {{"kind", "unary"}, {"op", unary_op_name(op)}};
      Tensor a;
      switch (op) {
        case UnaryOp::kNegative:
        case UnaryOp::kAbs:
        case UnaryOp::kSign:
        case UnaryOp::kSquare:
        case UnaryOp::kInvert:
        case UnaryOp::kRelu:
        case UnaryOp::kLogicalNot:
          a = make_view(rng, {7, 9}, t, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
          c["mode"] = "native";
          cases.push_back({op, a, -1, kExact, op == UnaryOp::kLogicalNot ? DType::kBool : t});
          break;
        case UnaryOp::kFloor:
        case UnaryOp::kCeil:
        case UnaryOp::kTrunc:
        case UnaryOp::kRint:
          a = make_view(rng, {7, 9}, t, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
          c["mode"] = "i64";
          c["rnd"] = dtype_name(t);
          cases.push_back({op, a, -1, kExact, t});
          break;
        default: {
          // Values float32 holds exactly, inside the op's domain where it has one.
          std::vector<int64_t> v;
          const IntRange r = int_dtype_range(t);
          const int64_t hi = std::min<int64_t>(r.hi, s.hi > 1e5 ? (1 << 20) : static_cast<int64_t>(s.hi));
          const int64_t lo = std::max<int64_t>(r.lo, s.log_range ? 1 : static_cast<int64_t>(s.lo));
          for (int i = 0; i < 200; ++i) v.push_back(rng.integers(lo, hi + 1));
          v.push_back(std::clamp<int64_t>(0, r.lo, r.hi));
          a = Tensor::from_i64({static_cast<int64_t>(v.size())}, v, t);
          c["mode"] = "f64";
          c["rnd"] = "float32";
          cases.push_back({op, a, -1, s.tol, DType::kFloat32});
          break;
        }
      }
      c["a"] = o.input(a);
      cases.back().id = o.add(c);
    }
  }
  // bool: logical_not and invert agree with NumPy.
  for (UnaryOp op : {UnaryOp::kLogicalNot, UnaryOp::kInvert}) {
    const Tensor a = make_values(rng, {11}, DType::kBool, Profile::kGeneral);
    cases.push_back({op, a,
                     o.add({{"kind", "unary"}, {"op", unary_op_name(op)}, {"a", o.input(a)}, {"mode", "native"}}),
                     kExact, DType::kBool});
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const std::string what = std::string(unary_op_name(c.op)) + " " + describe(c.a);
    const Tensor got = unary(c.op, c.a);
    EXPECT_EQ(got.dtype(), c.want) << what;
    EXPECT_EQ(unary_result_dtype(c.op, c.a.dtype()), c.want) << what;
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), c.tol, what));
  }
}

// ================================================================================================
// Reductions
// ================================================================================================

DType expected_reduce_dtype(ReduceOp op, DType t) {
  switch (op) {
    case ReduceOp::kAll:
    case ReduceOp::kAny: return DType::kBool;
    case ReduceOp::kMax:
    case ReduceOp::kMin: return t;
    case ReduceOp::kMean: return dtype_is_float(t) ? t : DType::kFloat32;
    case ReduceOp::kSum:
    case ReduceOp::kProd:
      if (dtype_is_float(t)) return t;
      return (t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32) ? DType::kUInt32 : DType::kInt32;
  }
  return t;
}

struct ReduceCase {
  ReduceOp op;
  Tensor a;
  std::vector<int> axes;
  bool keepdims;
  int id;
  Tol tol;
};

// Every subset of axes (the empty subset given as an empty list = all axes), some as negative
// axes and in shuffled order, with and without keepdims, on a contiguous and a strided input.
void add_reduce_cases(Rng& rng, Oracle& o, std::vector<ReduceCase>& cases, DType t, const std::vector<Tensor>& inputs,
                      bool float_mode) {
  std::vector<std::string> files;
  for (const Tensor& a : inputs) files.push_back(o.input(a));
  int turn = 0;  // the inputs (same shape, different layouts) take turns
  {
    const int nd = inputs.front().ndim();
    for (int k = 0; k < kNumReduceOps; ++k) {
      const auto op = static_cast<ReduceOp>(k);
      for (int mask = 0; mask < (1 << nd); ++mask) {
        const size_t which = static_cast<size_t>(turn++) % inputs.size();
        const Tensor& a = inputs[which];
        const std::string& file = files[which];
        std::vector<int> axes;
        for (int i = 0; i < nd; ++i)
          if (mask & (1 << i)) axes.push_back(rng.uniform() < 0.5 ? i - nd : i);
        for (size_t i = axes.size(); i > 1; --i) std::swap(axes[i - 1], axes[rng.integers(0, static_cast<int64_t>(i))]);
        for (bool keepdims : {false, true}) {
          json c = {
              {"kind", "reduce"}, {"op", reduce_op_name(op)}, {"a", file}, {"axes", axes}, {"keepdims", keepdims}};
          const DType rt = expected_reduce_dtype(op, t);
          Tol tol = kExact;
          if (float_mode || op == ReduceOp::kMean) {
            c["mode"] = "f64";
            if (op == ReduceOp::kSum || op == ReduceOp::kMean) tol = {1e-5, 1e-6};
            if (op == ReduceOp::kProd) tol = {1e-5, 1e-30};
            if (!float_mode) tol = {1e-6, 0};
            if (t == DType::kBFloat16) tol = {tol.rtol + 1.0 / 256, 1e-6};
          } else {
            c["mode"] = "i64";
          }
          c["rnd"] = dtype_name(rt);
          cases.push_back({op, a, axes, keepdims, o.add(c), tol});
        }
      }
    }
  }
}

void check_reduce_cases(const Oracle& o, const std::vector<ReduceCase>& cases) {
  for (const auto& c : cases) {
    std::ostringstream what;
    what << reduce_op_name(c.op) << " " << describe(c.a) << " axes [";
    for (int x : c.axes) what << x << " ";
    what << "] keepdims " << c.keepdims;
    const Tensor got = reduce(c.op, c.a, c.axes, c.keepdims);
    EXPECT_EQ(got.dtype(), expected_reduce_dtype(c.op, c.a.dtype())) << what.str();
    EXPECT_EQ(reduce_result_dtype(c.op, c.a.dtype()), expected_reduce_dtype(c.op, c.a.dtype())) << what.str();
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), c.tol, what.str()));
  }
}

// Values for reductions: products stay in float32's range, and about a third are zero so that
// all / any see both answers.
Tensor reduce_values(Rng& rng, const Shape& shape, DType t, int kind) {
  Tensor v = make_view(rng, shape, t, Profile::kFinite, kind);
  std::vector<float> f(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : f) {
    const double u = rng.uniform();
    x = u < 0.3 ? 0.0f : static_cast<float>((rng.uniform() < 0.5 ? -1 : 1) * (0.5 + 1.5 * rng.uniform()));
  }
  v.assign(Tensor::from_f32(shape, f, t));
  return v;
}

const Shape kReduceShapes[] = {{7}, {4, 5}, {3, 4, 5}, {2, 3, 4, 3}};

TEST(Reduce, Float32EveryAxisSubsetMatchesNumPy) {
  Rng rng(401);
  Oracle o;
  std::vector<ReduceCase> cases;
  for (const Shape& s : kReduceShapes) {
    const std::vector<Tensor> inputs = {reduce_values(rng, s, DType::kFloat32, 0),
                                        reduce_values(rng, s, DType::kFloat32, s.size() > 1 ? 5 : 2),
                                        reduce_values(rng, s, DType::kFloat32, 2)};
    for (const Tensor& in : inputs) ASSERT_EQ(in.shape(), s);
    add_reduce_cases(rng, o, cases, DType::kFloat32, inputs, true);
  }
  ASSERT_TRUE(o.run());
  check_reduce_cases(o, cases);
}

TEST(Reduce, IntegersEveryAxisSubsetMatchNumPy) {
  // Integer sums and products are exact in int64 and wrap into int32 / uint32 (ops.h); large
  // int32 / uint32 values make the wrap-around visible.
  Rng rng(402);
  Oracle o;
  std::vector<ReduceCase> cases;
  for (DType t : {DType::kInt8, DType::kInt32, DType::kUInt8, DType::kUInt32, DType::kBool}) {
    for (const Shape& s : kReduceShapes) {
      std::vector<Tensor> inputs;
      for (int kind : {0, s.size() > 1 ? 5 : 2}) {
        Tensor v = make_view(rng, s, t, Profile::kGeneral, kind);
        // About a fifth zeros, so that all / any see both answers.
        Tensor z = make_values(rng, s, t, Profile::kGeneral);
        Tensor mask = Tensor::from_i64(
            s,
            [&] {
              std::vector<int64_t> m(static_cast<size_t>(shape_numel(s)));
              for (auto& x : m) x = rng.uniform() < 0.2 ? 0 : 1;
              return m;
            }(),
            t);
        v.assign(binary(BinaryOp::kMultiply, z, mask, t));
        inputs.push_back(v);
      }
      add_reduce_cases(rng, o, cases, t, inputs, false);
    }
  }
  ASSERT_TRUE(o.run());
  check_reduce_cases(o, cases);
}

TEST(Reduce, BFloat16MatchesNumPyRounded) {
  Rng rng(403);
  Oracle o;
  std::vector<ReduceCase> cases;
  const Shape s = {3, 4, 5};
  const std::vector<Tensor> inputs = {reduce_values(rng, s, DType::kBFloat16, 0),
                                      reduce_values(rng, s, DType::kBFloat16, 1)};
  add_reduce_cases(rng, o, cases, DType::kBFloat16, inputs, true);
  ASSERT_TRUE(o.run());
  check_reduce_cases(o, cases);
}

TEST(Reduce, NaNEmptyAxesAndErrors) {
  Oracle o;
  std::vector<ReduceCase> cases;
  const Tensor a = Tensor::from_f32({2, 4}, std::vector<float>{1.0f, kNaN, 3.0f, -2.0f, 5.0f, 6.0f, kInf, -kInf});
  for (int k = 0; k < kNumReduceOps; ++k) {
    const auto op = static_cast<ReduceOp>(k);
    for (std::vector<int> axes : {std::vector<int>{}, std::vector<int>{1}, std::vector<int>{0}}) {
      const int id = o.add({{"kind", "reduce"},
                            {"op", reduce_op_name(op)},
                            {"a", o.input(a)},
                            {"axes", axes},
                            {"keepdims", false},
                            {"mode", "f64"},
                            {"rnd", dtype_name(expected_reduce_dtype(op, a.dtype()))}});
      cases.push_back({op, a, axes, false, id, kExact});
    }
  }
  // Reducing an empty axis: NumPy's identities (sum 0, prod 1, all true, any false; mean NaN).
  const Tensor e = Tensor::zeros({3, 0}, DType::kFloat32);
  const Tensor ei = Tensor::zeros({3, 0}, DType::kInt16);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kAll, ReduceOp::kAny, ReduceOp::kMean}) {
    for (const Tensor& t : {e, ei}) {
      const std::vector<int> axes = {1};
      const bool fl = dtype_is_float(t.dtype()) || op == ReduceOp::kMean;
      const int id = o.add({{"kind", "reduce"},
                            {"op", reduce_op_name(op)},
                            {"a", o.input(t)},
                            {"axes", axes},
                            {"keepdims", true},
                            {"mode", fl ? "f64" : "i64"},
                            {"rnd", dtype_name(expected_reduce_dtype(op, t.dtype()))}});
      cases.push_back({op, t, axes, true, id, kExact});
    }
  }
  ASSERT_TRUE(o.run());
  check_reduce_cases(o, cases);

  const int ax2[] = {2}, axm3[] = {-3}, rep[] = {0, -2};
  EXPECT_THROW(reduce(ReduceOp::kSum, a, ax2), std::invalid_argument);
  EXPECT_THROW(reduce(ReduceOp::kSum, a, axm3), std::invalid_argument);
  EXPECT_THROW(reduce(ReduceOp::kSum, a, rep), std::invalid_argument);
  const int ax1[] = {1};
  EXPECT_THROW(reduce(ReduceOp::kMax, e, ax1), std::invalid_argument);
  EXPECT_THROW(reduce(ReduceOp::kMin, ei, ax1), std::invalid_argument);
  // Reducing a 0-d tensor over "all axes" gives the element itself.
  const Tensor s = Tensor::full({}, DType::kFloat32, 2.5);
  EXPECT_EQ(reduce(ReduceOp::kSum, s, {}).item(), 2.5);
  EXPECT_EQ(reduce(ReduceOp::kSum, s, {}).shape(), Shape{});
  // out_dtype: the sum computed in double, stored once.
  const Tensor big = Tensor::full({1000}, DType::kFloat32, 0.1);
  EXPECT_EQ(reduce(ReduceOp::kSum, big, {}, false, DType::kBFloat16).dtype(), DType::kBFloat16);
  EXPECT_EQ(reduce(ReduceOp::kSum, big, {}, false, DType::kBFloat16).item(),
            static_cast<double>(bf16_to_f32(bf16_from_f32(static_cast<float>(1000 * double(0.1f))))));
}

// A row's max or min into one slot runs in lanes; it must give the sequential rule's bits: NaN
// sticky with its payload, a tie between -0 and +0 kept by the first, ±inf, long and short rows.
TEST(Reduce, MaxAndMinAlongARowGiveTheSequentialRulesBits) {
  auto sequential = [](const std::vector<float>& row, bool max) {
    double r = max ? -INFINITY : INFINITY;
    for (float f : row) {
      const double e = f;
      r = (r != r || e != e) ? r + e : (max ? (e > r ? e : r) : (e < r ? e : r));
    }
    return static_cast<float>(r);
  };
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  float payload_nan;
  const uint32_t nan_bits = 0x7fc01234u;
  std::memcpy(&payload_nan, &nan_bits, 4);
  for (int64_t n : {1, 15, 16, 17, 33, 1000, 1024, 2500}) {
    for (int kind = 0; kind < 6; ++kind) {
      std::vector<float> row(static_cast<size_t>(n));
      for (auto& v : row) v = static_cast<float>(static_cast<int32_t>(next() % 2001) - 1000) / 64.0f;
      const auto at = [&](uint32_t k) { return static_cast<size_t>(k % static_cast<uint32_t>(n)); };
      switch (kind) {
        case 0: break;
        case 1:  // only zeros of both signs, then negatives: the max is a zero whose sign the order decides
          for (auto& v : row) v = -std::fabs(v) - 1;
          row[at(next())] = 0.0f;
          row[at(next())] = -0.0f;
          row[at(next())] = 0.0f;
          break;
        case 2: row[at(next())] = payload_nan; break;
        case 3:
          row[at(next())] = INFINITY;
          row[at(next())] = -INFINITY;
          break;
        case 4:
          for (auto& v : row) v = std::fabs(v) + 1;
          row[at(next())] = -0.0f;
          row[at(next())] = 0.0f;
          break;
        case 5:  // every element equal
          for (auto& v : row) v = 3.5f;
          break;
      }
      Tensor t = Tensor::from_f32({2, n}, [&] {
        std::vector<float> two = row;
        two.insert(two.end(), row.begin(), row.end());
        return two;
      }());
      const int axes[] = {1};
      for (bool max : {true, false}) {
        Tensor r = reduce(max ? ReduceOp::kMax : ReduceOp::kMin, t, axes);
        const float want = sequential(row, max);
        for (int k = 0; k < 2; ++k)
          EXPECT_EQ(bits(r.data_as<float>()[k]), bits(want)) << "n=" << n << " kind=" << kind << " max=" << max;
      }
    }
  }
}

TEST(Reduce, IntegerMeanIsNotRoundedElementwise) {
  // ops.h: integer reductions accumulate exactly (int64); the mean of integers is their exact sum
  // divided by the count, rounded once to float32 — as NumPy's mean (float64) then cast. Rounding
  // each int32 element to float32 first loses up to 128 per element.
  const Tensor a = Tensor::from_i64({2}, std::vector<int64_t>{2147483647, -2147483646}, DType::kInt32);
  EXPECT_EQ(reduce(ReduceOp::kMean, a, {}).item(), 0.5);
}

TEST(Reduce, ArgMaxArgMinMatchNumPy) {
  // Small-integer values make ties common (the first index wins); a few NaNs (the first NaN wins,
  // as in NumPy) and ±inf.
  Rng rng(404);
  Oracle o;
  struct Case {
    bool is_max;
    Tensor a;
    int axis;
    bool keepdims;
    int id;
  };
  std::vector<Case> cases;
  for (DType t : {DType::kFloat32, DType::kInt8, DType::kUInt32, DType::kFloat16, DType::kBFloat16}) {
    for (const Shape& s : {Shape{9}, Shape{4, 6}, Shape{3, 4, 5}, Shape{2, 3, 2, 4}}) {
      {
        const int kind = static_cast<int>(rng.integers(0, 3));  // contiguous, transposed or strided
        Tensor a = make_view(rng, s, t, Profile::kSmallInt, kind);
        if (dtype_is_float(t)) {
          std::vector<float> v = a.to_f32_vector();
          for (auto& x : v) {
            const double u = rng.uniform();
            if (u < 0.04)
              x = kNaN;
            else if (u < 0.07)
              x = rng.uniform() < 0.5 ? kInf : -kInf;
          }
          a.assign(Tensor::from_f32(s, v, t));
        }
        const std::string file = o.input(a);
        const int nd = static_cast<int>(s.size());
        for (int axis = -nd; axis < nd; ++axis)
          for (bool keepdims : {false, true})
            for (bool is_max : {true, false})
              cases.push_back({is_max, a, axis, keepdims,
                               o.add({{"kind", "arg"},
                                      {"op", is_max ? "argmax" : "argmin"},
                                      {"a", file},
                                      {"axis", axis},
                                      {"keepdims", keepdims}})});
      }
    }
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const std::string what = std::string(c.is_max ? "argmax " : "argmin ") + describe(c.a) + " axis " +
                             std::to_string(c.axis) + (c.keepdims ? " keepdims" : "");
    const Tensor got = c.is_max ? argmax(c.a, c.axis, c.keepdims) : argmin(c.a, c.axis, c.keepdims);
    EXPECT_EQ(got.dtype(), DType::kInt32) << what;
    EXPECT_TRUE(tensors_match(got, o.answer(c.id), kExact, what));
  }
  EXPECT_THROW(argmax(Tensor::zeros({3, 0}, DType::kFloat32), 1), std::invalid_argument);
  EXPECT_THROW(argmax(Tensor::zeros({3, 2}, DType::kFloat32), 2), std::invalid_argument);
  EXPECT_THROW(argmin(Tensor::zeros({3, 2}, DType::kFloat32), -3), std::invalid_argument);
  EXPECT_EQ(argmax(Tensor::zeros({0, 3}, DType::kFloat32), 1).shape(), (Shape{0}));
}

// ================================================================================================
// Matmul
// ================================================================================================

struct MatmulCase {
  Tensor a, b;
  int id;
  double rtol;     // relative to |a| @ |b| (float), or exact (< 0)
  double rel_ref;  // plus this fraction of |ref| (narrow results)
};

void check_matmul_cases(const Oracle& o, const std::vector<MatmulCase>& cases) {
  for (const auto& c : cases) {
    const std::string what = "matmul " + describe(c.a) + " @ " + describe(c.b);
    const Tensor got = matmul(c.a, c.b);
    const DType want_dt = promote_types(c.a.dtype(), c.b.dtype()) == DType::kBool
                              ? DType::kInt32
                              : promote_types(c.a.dtype(), c.b.dtype());
    EXPECT_EQ(got.dtype(), want_dt) << what;
    const Tensor ans = o.answer(c.id);
    if (c.rtol < 0) {
      EXPECT_TRUE(tensors_match(got, ans, kExact, what));
      continue;
    }
    ASSERT_GE(ans.ndim(), 1) << what;
    ASSERT_EQ(ans.dim(0), 2) << what;
    const Tensor ref = ans.select(0, 0), scale = ans.select(0, 1);
    ASSERT_EQ(got.shape(), ref.shape()) << what;
    const auto g = got.to_f32_vector(), r = ref.to_f32_vector(), s = scale.to_f32_vector();
    int bad = 0;
    std::ostringstream msg;
    for (size_t i = 0; i < g.size(); ++i) {
      const double allowed = c.rtol * s[i] + c.rel_ref * std::fabs(r[i]) + 1e-30;
      if (!(std::fabs(double(g[i]) - r[i]) <= allowed) && bad++ < 5)
        msg << "\n  at " << index_str(got.shape(), static_cast<int64_t>(i)) << ": got " << g[i] << ", NumPy " << r[i]
            << " (allowed error " << allowed << ")";
    }
    EXPECT_EQ(bad, 0) << what << msg.str();
  }
}

// The cases run for every float dtype pair: 1-D/2-D combinations, batches with broadcasting,
// K = 0 and M = 0, each operand laid out by a random view kind.
std::vector<std::pair<Shape, Shape>> matmul_shapes() {
  return {{{5}, {5}},
          {{7}, {7, 3}},
          {{4, 7}, {7}},
          {{4, 7}, {7, 3}},
          {{1, 9}, {9, 1}},
          {{16, 33}, {33, 17}},
          {{2, 3, 4}, {4, 5}},
          {{3, 4}, {2, 4, 5}},
          {{2, 1, 3, 4}, {5, 4, 6}},
          {{2, 3, 4}, {2, 4, 2}},
          {{1, 3, 4}, {2, 1, 4, 6}},
          {{3, 6}, {4, 6, 2}},
          {{2, 3, 6}, {6}},
          {{6}, {2, 6, 3}},
          {{3, 0}, {0, 4}},
          {{0}, {0}},
          {{2, 3, 0}, {0, 2}},
          {{0, 3}, {3, 4}},
          {{3, 4}, {4, 0}}};
}

TEST(Matmul, Float32ShapesAndViewsMatchNumPy) {
  Rng rng(501);
  Oracle o;
  std::vector<MatmulCase> cases;
  for (int rep = 0; rep < 4; ++rep) {
    for (const auto& [sa, sb] : matmul_shapes()) {
      // rep 0: contiguous; then random layouts (transposed, strided, negative steps, broadcast).
      const int ka = rep == 0 ? 0 : static_cast<int>(rng.integers(0, 6));
      const int kb = rep == 0 ? 0 : static_cast<int>(rng.integers(0, 6));
      Tensor a = make_view(rng, sa, DType::kFloat32, Profile::kFinite, ka);
      Tensor b = make_view(rng, sb, DType::kFloat32, Profile::kFinite, kb);
      cases.push_back(
          {a, b, o.add({{"kind", "matmul"}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "f64"}}), 1e-5, 0});
    }
  }
  // Views BLAS can read in place with a leading dimension larger than the row (a column window of
  // a wider matrix), and its transpose.
  const Tensor wide = make_values(rng, {12, 20}, DType::kFloat32, Profile::kFinite);
  const Tensor wb = make_values(rng, {5, 12}, DType::kFloat32, Profile::kFinite);
  for (const auto& [a, b] :
       {std::pair{wide.slice(1, 3, 8).transpose(), wide.slice(1, 10, 17)},
        std::pair{wide.slice(1, 3, 8), wide.slice(0, 0, 5)}, std::pair{wb.slice(0, 1, 4), wide.slice(1, 2, 20, 3)},
        std::pair{wide.slice(0, 0, 5).slice(1, 0, 12), wb.transpose()},
        std::pair{wide.slice(0, 1, 12, 2).slice(1, 19, 7, -1), wide.transpose().slice(0, 2, 14)}})
    cases.push_back(
        {a, b, o.add({{"kind", "matmul"}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "f64"}}), 1e-5, 0});
  ASSERT_TRUE(o.run());
  check_matmul_cases(o, cases);
}

TEST(Matmul, MixedAndNarrowFloatTypes) {
  // float32 × int8 → float32; float16 / bfloat16 results are the float32 product rounded once
  // (one ulp of the result type allowed for the double rounding against NumPy's float64 product).
  Rng rng(502);
  Oracle o;
  std::vector<MatmulCase> cases;
  const std::pair<Shape, Shape> shapes[] = {{{6, 9}, {9, 5}}, {{2, 4, 8}, {8, 3}}, {{9}, {9, 4}}, {{3, 5}, {5}}};
  for (const auto& [ta, tb, rnd, rel] : {std::tuple{DType::kFloat32, DType::kInt8, "", 0.0},
                                         std::tuple{DType::kBFloat16, DType::kBFloat16, "bfloat16", 1.0 / 256},
                                         std::tuple{DType::kFloat16, DType::kFloat16, "float16", 1.0 / 1024},
                                         std::tuple{DType::kBFloat16, DType::kFloat32, "", 0.0},
                                         std::tuple{DType::kFloat8E4M3, DType::kFloat8E4M3, "float8_e4m3", 1.0 / 8}}) {
    for (const auto& [sa, sb] : shapes) {
      Tensor a = make_view(rng, sa, ta, Profile::kFinite, static_cast<int>(rng.integers(0, 6)));
      Tensor b = make_view(rng, sb, tb, Profile::kFinite, static_cast<int>(rng.integers(0, 6)));
      if (ta == DType::kFloat16 || is_fp8(ta)) {  // keep products and sums inside the narrow range
        a = make_view(rng, sa, ta, Profile::kSmallInt, static_cast<int>(rng.integers(0, 6)));
        b = make_view(rng, sb, tb, Profile::kSmallInt, static_cast<int>(rng.integers(0, 6)));
      }
      json c = {{"kind", "matmul"}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "f64"}};
      if (std::string(rnd).size()) c["rnd"] = rnd;
      cases.push_back({a, b, o.add(c), 1e-5, rel});
    }
  }
  ASSERT_TRUE(o.run());
  check_matmul_cases(o, cases);
}

TEST(Matmul, IntegersAreExact) {
  // Integer operands: exact sums stored with wrap-around into the promoted type (int8 @ int8 wraps
  // in int8, as NumPy's int8 matmul does; int16 @ int32 sums up to 2^40 wrap in int32); bool @ bool
  // gives int32 counts. (ops.h: exact while |sums| < 2^53.)
  Rng rng(503);
  Oracle o;
  std::vector<MatmulCase> cases;
  const std::pair<DType, DType> pairs[] = {{DType::kInt8, DType::kInt8},   {DType::kInt16, DType::kInt32},
                                           {DType::kUInt8, DType::kUInt8}, {DType::kInt8, DType::kUInt8},
                                           {DType::kBool, DType::kBool},   {DType::kUInt16, DType::kInt32}};
  for (const auto& [ta, tb] : pairs) {
    for (const auto& [sa, sb] : matmul_shapes()) {
      Tensor a = make_view(rng, sa, ta, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
      Tensor b = make_view(rng, sb, tb, Profile::kGeneral, static_cast<int>(rng.integers(0, 6)));
      if (ta == DType::kInt16 || tb == DType::kInt32) {  // keep int32 sums exact in double
        a = make_view(rng, sa, ta, Profile::kPowBase, static_cast<int>(rng.integers(0, 6)));
        b = make_view(rng, sb, tb, Profile::kPowBase, static_cast<int>(rng.integers(0, 6)));
      }
      if (ta == DType::kInt16 && sa.size() == 2 && sb.size() == 2) {  // int32 sums past 2^31 wrap
        a = random_integers(sa, ta, rng, -32768, 32768);
        b = random_integers(sb, tb, rng, -(1 << 20), 1 << 20);
      }
      const DType rt = promote_types(ta, tb) == DType::kBool ? DType::kInt32 : promote_types(ta, tb);
      cases.push_back(
          {a, b,
           o.add({{"kind", "matmul"}, {"a", o.input(a)}, {"b", o.input(b)}, {"mode", "i64"}, {"rnd", dtype_name(rt)}}),
           -1, 0});
    }
  }
  ASSERT_TRUE(o.run());
  check_matmul_cases(o, cases);
}

// gemm_into writes a product in place whatever its operands' layouts (a strided operand is copied
// for BLAS first), overwriting or accumulating, and leaves an output BLAS cannot write alone.
TEST(Matmul, GemmIntoTakesStridedOperandsInPlace) {
  Rng rng(77);
  const Tensor wide = make_values(rng, {3, 23}, DType::kFloat32, Profile::kFinite);
  const Tensor a = make_values(rng, {3, 8}, DType::kFloat32, Profile::kFinite).transpose();  // [8, 3]
  const Tensor b = wide.slice(1, 0, 23, 2);  // [3, 12], every other column: not a BLAS view
  const Tensor want = matmul(a, b);
  for (const bool accumulate : {false, true}) {
    Tensor out = Tensor::full({8, 12}, DType::kFloat32, 0.5);
    ASSERT_TRUE(gemm_into(a, b, out, accumulate));
    const std::vector<float> got = out.to_f32_vector(), ref = want.to_f32_vector();
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i] + (accumulate ? 0.5f : 0.0f), 1e-5) << i;
  }
  Tensor column_major = Tensor::zeros({12, 8}, DType::kFloat32).transpose();
  EXPECT_FALSE(gemm_into(a, b, column_major, false));
  EXPECT_EQ(column_major.to_f32_vector(), std::vector<float>(96, 0.0f));
}

// A product of few columns whose left operand is a transposed view (nc_matmul's stationary tile)
// is summed over k in order with fused multiply-adds from zero, then added to out: bit for bit that
// order, for blocks of rows and columns whole and ragged, a strided right operand, and M = 1.
TEST(Matmul, GemmIntoSumsFewColumnsInOrderOfK) {
  Rng rng(78);
  for (const int64_t m : {1, 31, 32, 70, 128})
    for (const int64_t k : {1, 5, 128})
      for (const int64_t n : {1, 5, 14, 64}) {
        const Tensor a = make_values(rng, {k, m}, DType::kFloat32, Profile::kFinite).transpose();  // [m, k]
        const Tensor wide = make_values(rng, {k, 2 * n}, DType::kFloat32, Profile::kFinite);
        const Tensor b = wide.slice(1, 0, 2 * n, 2);  // [k, n], every other column
        const std::vector<float> av = a.to_f32_vector(), bv = b.to_f32_vector();
        for (const bool accumulate : {false, true}) {
          Tensor out = Tensor::full({m, n}, DType::kFloat32, 0.25);
          ASSERT_TRUE(gemm_into(a, b, out, accumulate));
          const std::vector<float> got = out.to_f32_vector();
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              float sum = 0.0f;
              for (int64_t q = 0; q < k; ++q)
                sum = std::fma(av[static_cast<size_t>(i * k + q)], bv[static_cast<size_t>(q * n + j)], sum);
              const float want = accumulate ? sum + 0.25f : sum;
              ASSERT_EQ(got[static_cast<size_t>(i * n + j)], want)
                  << m << "x" << k << "x" << n << " at " << i << "," << j;
            }
        }
      }
}

TEST(Matmul, ShapeErrorsThrow) {
  auto z = [](Shape s) { return Tensor::zeros(s, DType::kFloat32); };
  EXPECT_THROW(matmul(z({3, 4}), z({5, 6})), std::invalid_argument);
  EXPECT_THROW(matmul(z({4}), z({5})), std::invalid_argument);
  EXPECT_THROW(matmul(z({3, 4}), z({5})), std::invalid_argument);
  EXPECT_THROW(matmul(z({4}), z({3, 5})), std::invalid_argument);
  EXPECT_THROW(matmul(z({2, 3, 4}), z({3, 4, 5})), std::invalid_argument);  // batch 2 vs 3
  EXPECT_THROW(matmul(z({}), z({3})), std::invalid_argument);
  EXPECT_THROW(matmul(z({3}), z({})), std::invalid_argument);
  EXPECT_EQ(matmul(z({5}), z({5})).shape(), Shape{});
  EXPECT_EQ(matmul(z({2, 1, 3, 4}), z({5, 4, 6})).shape(), (Shape{2, 5, 3, 6}));
  // out_dtype: the float32 product stored once.
  const Tensor a = Tensor::from_f32({1, 2}, std::vector<float>{1.0f, 1.0f});
  const Tensor b = Tensor::from_f32({2, 1}, std::vector<float>{1.0f, 1.0f / 256});
  const Tensor r = matmul(a, b, DType::kBFloat16);
  EXPECT_EQ(r.dtype(), DType::kBFloat16);
  EXPECT_EQ(r.item(), 1.0);  // 1 + 2^-8 rounds (ties to even) to 1 in bfloat16
}

}  // namespace
}  // namespace nki_agent
