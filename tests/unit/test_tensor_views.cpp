// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// tests/unit/test_tensor_views.cpp — the strided views of tensor/tensor.h against NumPy
// (tests/oracle/tensor_ops.py): random chains of slice / select / transpose / swapaxes /
// expand_dims / squeeze / broadcast_to / reshape applied to the same array on both sides (values,
// shapes, strides, offsets, contiguity and storage sharing compared), Python slice semantics,
// reshape as view or copy, view_as, copy / contiguous / astype, assign with broadcasting and
// overlap, fill with saturation, to_f32_vector / to_i64_vector on strided views, and the
// std::invalid_argument error cases.
//
// All comparisons here are exact: views move no values, and the conversions checked (integer
// wrap-around, float → narrow float RNE, float → int truncation) are exactly specified.
#include "tensor/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
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
constexpr int64_t N = Slice::kNone;

// ---- oracle plumbing ---------------------------------------------------------------------------

using Oracle = testing::TensorOracle;

json shape_json(const Shape& s) {
  return json(std::vector<int64_t>(s.begin(), s.end()));
}

std::string describe(const Tensor& t) {
  std::ostringstream s;
  s << dtype_name(t.dtype()) << shape_str(t.shape()) << " strides " << shape_str(t.strides()) << " offset "
    << t.offset();
  return s.str();
}

// Exact comparison of shape and values (integers as int64, floats as float32 with NaN == NaN).
::testing::AssertionResult same_values(const Tensor& got, const Tensor& want, const std::string& what) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << what << ": shape " << shape_str(got.shape()) << ", NumPy "
                                         << shape_str(want.shape());
  std::ostringstream msg;
  int bad = 0;
  if (!dtype_is_float(got.dtype()) && !dtype_is_float(want.dtype())) {
    const auto g = got.to_i64_vector(), w = want.to_i64_vector();
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != w[i] && bad++ < 6) msg << "\n  [" << i << "] got " << g[i] << ", NumPy " << w[i];
  } else {
    const auto g = got.to_f32_vector(), w = want.to_f32_vector();
    for (size_t i = 0; i < g.size(); ++i)
      if (!(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) && bad++ < 6)
        msg << "\n  [" << i << "] got " << g[i] << ", NumPy " << w[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << got.numel() << " elements differ"
                                       << msg.str();
}

// 0, 1, 2, ... as int32 in the given shape: every element names its storage position.
Tensor iota(const Shape& shape, DType dt = DType::kInt32) {
  std::vector<int64_t> v(static_cast<size_t>(shape_numel(shape)));
  std::iota(v.begin(), v.end(), 0);
  return Tensor::from_i64(shape, v, dt);
}

std::vector<int64_t> range_vec(int64_t lo, int64_t hi, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) v.push_back(i);
  return v;
}

// ================================================================================================
// Random view chains against NumPy
// ================================================================================================

// One operation of a chain, applied to a Tensor and described for the oracle.
struct ViewOp {
  json spec;
  Tensor apply(const Tensor& t) const {
    const std::string name = spec[0];
    if (name == "slice") {
      auto opt = [](const json& j) { return j.is_null() ? Slice::kNone : j.get<int64_t>(); };
      return t.slice(spec[1].get<int>(), Slice{opt(spec[2]), opt(spec[3]), spec[4].get<int64_t>()});
    }
    if (name == "select") return t.select(spec[1].get<int>(), spec[2].get<int64_t>());
    if (name == "transpose") {
      if (spec[1].is_null()) return t.transpose();
      const auto perm = spec[1].get<std::vector<int>>();
      return t.transpose(perm);
    }
    if (name == "swapaxes") return t.swapaxes(spec[1].get<int>(), spec[2].get<int>());
    if (name == "expand_dims") return t.expand_dims(spec[1].get<int>());
    if (name == "squeeze") return t.squeeze(spec[1].get<int>());
    if (name == "broadcast_to") {
      const auto s = spec[1].get<std::vector<int64_t>>();
      return t.broadcast_to(Shape(s.begin(), s.end()));
    }
    if (name == "reshape") {
      const auto s = spec[1].get<std::vector<int64_t>>();
      return t.reshape(Shape(s.begin(), s.end()));
    }
    throw std::logic_error("unknown view op " + name);
  }
};

// A random valid view operation for a tensor of shape s (rank kept at most 6).
ViewOp random_view_op(Rng& rng, const Shape& s) {
  const int nd = static_cast<int>(s.size());
  const int64_t numel = shape_numel(s);
  for (;;) {
    switch (rng.integers(0, 8)) {
      case 0: {  // slice with Python semantics: any start / stop, also out of range
        if (nd == 0) break;
        const int axis = static_cast<int>(rng.integers(-nd, nd));
        const int64_t n = s[static_cast<size_t>(axis < 0 ? axis + nd : axis)];
        auto bound = [&]() -> json {
          if (rng.uniform() < 0.25) return nullptr;
          return rng.integers(-2 * n - 2, 2 * n + 3);
        };
        int64_t step = rng.integers(1, 4) * (rng.uniform() < 0.4 ? -1 : 1);
        return {{"slice", axis, bound(), bound(), step}};
      }
      case 1: {  // select
        if (nd == 0) break;
        const int axis = static_cast<int>(rng.integers(-nd, nd));
        const int64_t n = s[static_cast<size_t>(axis < 0 ? axis + nd : axis)];
        if (n == 0) break;
        return {{"select", axis, rng.integers(-n, n)}};
      }
      case 2: {  // transpose: a permutation (some axes negative) or the reversal
        if (rng.uniform() < 0.3) return {{"transpose", nullptr}};
        std::vector<int> perm(static_cast<size_t>(nd));
        std::iota(perm.begin(), perm.end(), 0);
        for (int i = nd - 1; i > 0; --i) std::swap(perm[i], perm[rng.integers(0, i + 1)]);
        for (auto& p : perm)
          if (rng.uniform() < 0.3) p -= nd;
        return {{"transpose", perm}};
      }
      case 3:
        if (nd == 0) break;
        return {{"swapaxes", rng.integers(-nd, nd), rng.integers(-nd, nd)}};
      case 4:
        if (nd >= 6) break;
        return {{"expand_dims", rng.integers(-nd - 1, nd + 1)}};
      case 5: {
        std::vector<int> ones;
        for (int i = 0; i < nd; ++i)
          if (s[i] == 1) ones.push_back(i);
        if (ones.empty()) break;
        const int ax = ones[rng.integers(0, static_cast<int64_t>(ones.size()))];
        return {{"squeeze", rng.uniform() < 0.5 ? ax : ax - nd}};
      }
      case 6: {  // broadcast_to: new leading axes, size-1 axes widened
        if (nd >= 5 || numel > 200) break;
        Shape t;
        for (int64_t k = rng.integers(0, 2); k > 0; --k) t.push_back(rng.integers(1, 4));
        for (int64_t d : s) t.push_back(d == 1 && rng.uniform() < 0.7 ? rng.integers(0, 4) : d);
        return {{"broadcast_to", shape_json(t)}};
      }
      case 7: {  // reshape into a random factorisation of numel, sometimes with -1
        if (numel == 0) {
          Shape t = {0, rng.integers(1, 4)};
          if (rng.uniform() < 0.5) std::swap(t[0], t[1]);
          return {{"reshape", shape_json(t)}};
        }
        Shape t;
        int64_t rest = numel;
        const int rank = static_cast<int>(rng.integers(1, 5));
        for (int i = 0; i + 1 < rank; ++i) {
          std::vector<int64_t> divisors;
          for (int64_t d = 1; d <= rest; ++d)
            if (rest % d == 0) divisors.push_back(d);
          const int64_t d = divisors[rng.integers(0, static_cast<int64_t>(divisors.size()))];
          t.push_back(d);
          rest /= d;
        }
        t.push_back(rest);
        for (size_t i = t.size(); i > 1; --i) std::swap(t[i - 1], t[rng.integers(0, static_cast<int64_t>(i))]);
        if (rng.uniform() < 0.4) t[rng.integers(0, static_cast<int64_t>(t.size()))] = -1;
        return {{"reshape", shape_json(t)}};
      }
    }
  }
}

TEST(ViewChains, MatchNumPy) {
  // For each seed: a base array of unique values, 1-5 random view operations applied to it by the
  // library and by NumPy. Values, shape, and — when NumPy's result is a view of the base — the
  // strides (of axes longer than 1), the offset and the contiguity flag must agree, and the result
  // shares the base's storage exactly when NumPy's does (so reshape copies exactly when NumPy's).
  Rng rng(11);
  Oracle o;
  struct Case {
    Tensor base, view;
    std::string ops;
    int id;
  };
  std::vector<Case> cases;
  for (int i = 0; i < 600; ++i) {
    Shape s;
    const int rank = static_cast<int>(rng.integers(1, 5));
    for (int k = 0; k < rank; ++k) s.push_back(rng.uniform() < 0.15 ? 1 : rng.integers(2, 7));
    if (i % 50 == 0) s[0] = 0;
    const Tensor base = iota(s);
    Tensor v = base;
    json ops = json::array();
    const int nops = static_cast<int>(rng.integers(1, 6));
    for (int k = 0; k < nops; ++k) {
      const ViewOp op = random_view_op(rng, v.shape());
      ops.push_back(op.spec);
      v = op.apply(v);
    }
    cases.push_back({base, v, ops.dump(), o.add({{"kind", "view"}, {"a", o.input(base)}, {"ops", ops}})});
  }
  ASSERT_TRUE(o.run());
  int shared = 0, copied = 0;
  for (const auto& c : cases) {
    const std::string what = shape_str(c.base.shape()) + " " + c.ops + " → " + describe(c.view);
    ASSERT_FALSE(o.failed(c.id)) << what << ": NumPy rejected it: " << o.meta(c.id)["error"];
    EXPECT_TRUE(same_values(c.view, o.answer(c.id), what));
    if (c.view.numel() == 0) continue;  // NumPy never reports memory shared by empty arrays
    const json& m = o.meta(c.id);
    const bool np_shares = m["shares"].get<bool>();
    EXPECT_EQ(c.view.storage() == c.base.storage(), np_shares) << what;
    EXPECT_EQ(c.view.is_contiguous(), m["c_contiguous"].get<bool>()) << what;
    (np_shares ? shared : copied)++;
    if (!np_shares || c.view.storage() != c.base.storage()) continue;
    EXPECT_EQ(c.view.offset(), m["offset"].get<int64_t>()) << what;
    const auto np_strides = m["strides"].get<std::vector<int64_t>>();
    for (int ax = 0; ax < c.view.ndim(); ++ax)
      if (c.view.shape()[ax] > 1) {
        EXPECT_EQ(c.view.strides()[ax], np_strides[ax]) << what << " axis " << ax;
      }
  }
  EXPECT_GT(shared, 100);
  EXPECT_GT(copied, 10);  // some reshapes had to copy
}

TEST(ViewChains, FloatViewsKeepValuesExactly) {
  // The same kind of chain over float16 / bfloat16 / float32 storage (including NaN and ±inf):
  // views never convert, so values come back bit-for-bit.
  Rng rng(12);
  Oracle o;
  struct Case {
    Tensor view;
    int id;
  };
  std::vector<Case> cases;
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kUInt8, DType::kBool}) {
    for (int i = 0; i < 40; ++i) {
      const Shape s = {rng.integers(1, 6), rng.integers(1, 6), rng.integers(1, 4)};
      std::vector<float> vals(static_cast<size_t>(shape_numel(s)));
      for (auto& x : vals)
        x = rng.uniform() < 0.1 ? (rng.uniform() < 0.5 ? kNaN : -kInf) : static_cast<float>(rng.normal() * 100);
      const Tensor base = Tensor::from_f32(s, vals, dt);
      Tensor v = base;
      json ops = json::array();
      for (int k = 0; k < 3; ++k) {
        const ViewOp op = random_view_op(rng, v.shape());
        ops.push_back(op.spec);
        v = op.apply(v);
      }
      cases.push_back({v, o.add({{"kind", "view"}, {"a", o.input(base)}, {"ops", ops}})});
    }
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) EXPECT_TRUE(same_values(c.view, o.answer(c.id), describe(c.view)));
}

// ================================================================================================
// Slicing
// ================================================================================================

TEST(Slicing, PythonSemanticsForEveryStartStopStep) {
  // Every (start, stop, step) with start / stop in None ∪ [-8, 8] and step in ±1..3, on lengths
  // 0, 1, 2 and 5, against Python's own list slicing.
  Oracle o;
  struct Table {
    int64_t n;
    std::vector<std::array<int64_t, 3>> slices;
    int id;
  };
  std::vector<Table> tables;
  for (int64_t n : {0, 1, 2, 5}) {
    Table t{n, {}, 0};
    json js = json::array();
    std::vector<int64_t> bounds = {N};
    for (int64_t b = -8; b <= 8; ++b) bounds.push_back(b);
    bounds.push_back(INT64_MAX);
    bounds.push_back(INT64_MIN + 1);
    for (int64_t start : bounds)
      for (int64_t stop : bounds)
        for (int64_t step : {-3, -2, -1, 1, 2, 3}) {
          t.slices.push_back({start, stop, step});
          auto j = [](int64_t v) { return v == N ? json(nullptr) : json(v); };
          js.push_back({j(start), j(stop), step});
        }
    t.id = o.add({{"kind", "slice_table"}, {"n", n}, {"slices", js}});
    tables.push_back(std::move(t));
  }
  ASSERT_TRUE(o.run());
  for (const auto& t : tables) {
    const auto want = o.meta(t.id)["indices"].get<std::vector<std::vector<int64_t>>>();
    ASSERT_EQ(want.size(), t.slices.size());
    const Tensor base = iota({t.n});
    // Also along the middle axis of a 3-D tensor: the same indices times the axis stride.
    const Tensor base3 = iota({2, t.n, 3});
    for (size_t i = 0; i < t.slices.size(); ++i) {
      const auto [start, stop, step] = t.slices[i];
      const std::string what = "n=" + std::to_string(t.n) + " [" + (start == N ? "None" : std::to_string(start)) + ":" +
                               (stop == N ? "None" : std::to_string(stop)) + ":" + std::to_string(step) + "]";
      const Tensor v = base.slice(0, Slice{start, stop, step});
      EXPECT_EQ(v.to_i64_vector(), want[i]) << what;
      EXPECT_EQ(v.storage(), base.storage()) << what;
      const Tensor v3 = base3.slice(-2, Slice{start, stop, step});
      ASSERT_EQ(v3.shape(), (Shape{2, static_cast<int64_t>(want[i].size()), 3})) << what;
      for (size_t k = 0; k < want[i].size(); ++k) {
        const int64_t idx[] = {1, static_cast<int64_t>(k), 2};
        EXPECT_EQ(v3.get_f32(idx), static_cast<float>(1 * t.n * 3 + want[i][k] * 3 + 2)) << what;
      }
    }
  }
}

TEST(Slicing, StepsComposeAndShareStorage) {
  const Tensor a = iota({20});
  const Tensor r = a.slice(0, N, N, -1);
  EXPECT_EQ(r.strides(), (Strides{-1}));
  EXPECT_EQ(r.to_i64_vector(), range_vec(19, -1, -1));
  const Tensor rr = r.slice(0, 2, 17, 3);  // a[::-1][2:17:3]
  EXPECT_EQ(rr.to_i64_vector(), (std::vector<int64_t>{17, 14, 11, 8, 5}));
  EXPECT_EQ(rr.strides(), (Strides{-3}));
  EXPECT_EQ(rr.slice(0, N, N, -2).to_i64_vector(), (std::vector<int64_t>{5, 11, 17}));
  EXPECT_EQ(rr.storage(), a.storage());
  // The int64_t overload is the same as a Slice.
  EXPECT_EQ(a.slice(0, -5, -1).to_i64_vector(), (std::vector<int64_t>{15, 16, 17, 18}));
  // Writing through a view writes the base.
  Tensor w = a.copy();
  Tensor every_third = w.slice(0, 1, N, 3);
  every_third.fill(-1);
  const auto got = w.to_i64_vector();
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(got[i], i % 3 == 1 ? -1 : i) << i;
}

TEST(Slicing, Errors) {
  const Tensor a = iota({3, 4});
  EXPECT_THROW(a.slice(0, 0, 2, 0), std::invalid_argument);
  EXPECT_THROW(a.slice(2, 0, 2), std::invalid_argument);
  EXPECT_THROW(a.slice(-3, 0, 2), std::invalid_argument);
  EXPECT_THROW(iota({}).slice(0, 0, 1), std::invalid_argument);
  EXPECT_NO_THROW(a.slice(-2, 0, 2));
}

// ================================================================================================
// select, transpose, swapaxes, expand_dims, squeeze, broadcast_to
// ================================================================================================

TEST(Views, SelectDropsTheAxis) {
  const Tensor a = iota({3, 4, 5});
  const Tensor s = a.select(1, -1);  // a[:, 3, :]
  EXPECT_EQ(s.shape(), (Shape{3, 5}));
  EXPECT_EQ(s.strides(), (Strides{20, 1}));
  EXPECT_EQ(s.offset(), 15);
  EXPECT_EQ(s.storage(), a.storage());
  const int64_t i0[] = {2, 4};
  EXPECT_EQ(s.get_f32(i0), 2 * 20 + 3 * 5 + 4);
  const Tensor e = iota({4}).select(0, 2);
  EXPECT_EQ(e.shape(), Shape{});
  EXPECT_EQ(e.item(), 2.0);
  EXPECT_THROW(a.select(1, 4), std::invalid_argument);
  EXPECT_THROW(a.select(1, -5), std::invalid_argument);
  EXPECT_THROW(a.select(3, 0), std::invalid_argument);
  EXPECT_THROW(iota({0}).select(0, 0), std::invalid_argument);
}

TEST(Views, TransposeAndSwapaxes) {
  const Tensor a = iota({2, 3, 4});
  const int perm[] = {2, -3, 1};
  const Tensor t = a.transpose(perm);
  EXPECT_EQ(t.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(t.strides(), (Strides{1, 12, 4}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(a.transpose().shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(a.transpose().strides(), (Strides{1, 4, 12}));
  EXPECT_EQ(a.swapaxes(0, -1).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(a.swapaxes(1, 1).strides(), a.strides());
  const int64_t idx[] = {3, 1, 2};
  EXPECT_EQ(t.get_f32(idx), 1 * 12 + 2 * 4 + 3);
  const int bad_len[] = {0, 1};
  const int repeated[] = {0, 1, 1};
  const int repeated_neg[] = {0, 2, -1};
  const int out_of_range[] = {0, 1, 3};
  EXPECT_THROW(a.transpose(bad_len), std::invalid_argument);
  EXPECT_THROW(a.transpose(repeated), std::invalid_argument);
  EXPECT_THROW(a.transpose(repeated_neg), std::invalid_argument);
  EXPECT_THROW(a.transpose(out_of_range), std::invalid_argument);
  EXPECT_THROW(a.swapaxes(0, 3), std::invalid_argument);
  // 0-d and 1-d transposes are the identity.
  EXPECT_EQ(iota({}).transpose().shape(), Shape{});
  EXPECT_EQ(iota({5}).transpose().to_i64_vector(), range_vec(0, 5));
}

TEST(Views, ExpandDimsAndSqueeze) {
  const Tensor a = iota({2, 3});
  EXPECT_EQ(a.expand_dims(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(a.expand_dims(2).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(a.expand_dims(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(a.expand_dims(-3).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(a.expand_dims(1).shape(), (Shape{2, 1, 3}));
  EXPECT_TRUE(a.expand_dims(1).is_contiguous());
  EXPECT_EQ(a.expand_dims(1).to_i64_vector(), range_vec(0, 6));
  EXPECT_THROW(a.expand_dims(3), std::invalid_argument);
  EXPECT_THROW(a.expand_dims(-4), std::invalid_argument);
  const Tensor b = iota({1, 3, 1});
  EXPECT_EQ(b.squeeze(0).shape(), (Shape{3, 1}));
  EXPECT_EQ(b.squeeze(-1).shape(), (Shape{1, 3}));
  EXPECT_EQ(b.squeeze(0).squeeze(-1).to_i64_vector(), range_vec(0, 3));
  EXPECT_THROW(b.squeeze(1), std::invalid_argument);
  EXPECT_THROW(b.squeeze(3), std::invalid_argument);
  EXPECT_EQ(iota({}).expand_dims(0).shape(), Shape{1});
  EXPECT_EQ(iota({1}).squeeze(0).shape(), Shape{});
}

TEST(Views, BroadcastTo) {
  const Tensor a = iota({3, 1});
  const Tensor b = a.broadcast_to({2, 3, 4});
  EXPECT_EQ(b.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(b.strides()[0], 0);
  EXPECT_EQ(b.strides()[2], 0);
  EXPECT_EQ(b.storage(), a.storage());
  EXPECT_FALSE(b.is_contiguous());
  const auto v = b.to_i64_vector();
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(v[i], (i / 4) % 3) << i;
  EXPECT_EQ(a.broadcast_to({3, 0}).numel(), 0);
  EXPECT_EQ(iota({}).broadcast_to({2, 2}).to_i64_vector(), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_THROW(a.broadcast_to({3, 4, 2}), std::invalid_argument);
  EXPECT_THROW(a.broadcast_to({4}), std::invalid_argument);          // lower rank
  EXPECT_THROW(a.broadcast_to({2, 4}), std::invalid_argument);       // 3 vs 2
  EXPECT_THROW(iota({0}).broadcast_to({1}), std::invalid_argument);  // NumPy refuses 0 → 1 too
  EXPECT_THROW(iota({2}).broadcast_to({}), std::invalid_argument);
}

// ================================================================================================
// reshape, view_as
// ================================================================================================

TEST(Reshape, ViewWhenStridesAllowCopyOtherwise) {
  const Tensor a = iota({2, 3, 4});
  const Tensor v = a.reshape({6, 4});
  EXPECT_EQ(v.storage(), a.storage());
  EXPECT_EQ(v.to_i64_vector(), range_vec(0, 24));
  EXPECT_EQ(a.reshape({4, -1}).shape(), (Shape{4, 6}));
  EXPECT_EQ(a.reshape({-1}).shape(), Shape{24});
  EXPECT_EQ(a.reshape({1, 2, 1, 12, 1}).storage(), a.storage());
  // Merging a transposed pair of axes cannot be a view: a copy in C order of the view.
  const Tensor t = a.swapaxes(1, 2);  // [2, 4, 3]
  const Tensor c = t.reshape({2, 12});
  EXPECT_NE(c.storage(), a.storage());
  EXPECT_TRUE(c.is_contiguous());
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t j = 0; j < 3; ++j) want.push_back(i * 12 + j * 4 + k);
  EXPECT_EQ(c.to_i64_vector(), want);
  // ...but splitting an axis of a transposed view, or merging the untouched leading ones, can.
  EXPECT_EQ(t.reshape({2, 2, 2, 3}).storage(), a.storage());
  EXPECT_EQ(a.transpose().reshape({2, 2, 3, 2}).storage(), a.storage());
  // A reversed axis reshapes as a view with negative strides.
  const Tensor r = iota({12}).slice(0, N, N, -1).reshape({3, 4});
  EXPECT_EQ(r.strides(), (Strides{-4, -1}));
  EXPECT_EQ(r.to_i64_vector(), range_vec(11, -1, -1));
  // Every other element of the last axis: the strides still chain (4 == 2 * 2), so merging is a
  // view; a window of 3 of the 4 elements breaks the chain, so merging copies.
  const Tensor s = a.slice(2, 0, 4, 2);  // [2, 3, 2], strides [12, 4, 2]
  EXPECT_EQ(s.reshape({2, 6}).storage(), a.storage());
  EXPECT_EQ(s.reshape({2, 6}).strides(), (Strides{12, 2}));
  EXPECT_EQ(s.reshape({12}).storage(), a.storage());
  const Tensor w = a.slice(2, 0, 3);  // [2, 3, 3], strides [12, 4, 1]
  const Tensor wc = w.reshape({2, 9});
  EXPECT_NE(wc.storage(), a.storage());
  EXPECT_EQ(wc.to_i64_vector(), w.to_i64_vector());
  EXPECT_EQ(w.reshape({6, 3}).storage(), a.storage());  // merging the leading axes is fine
  EXPECT_EQ(w.reshape({2, 3, 3, 1}).storage(), a.storage());
  // Empty tensors.
  EXPECT_EQ(iota({0, 3}).reshape({3, 0, 5}).shape(), (Shape{3, 0, 5}));
  EXPECT_EQ(iota({0, 3}).reshape({-1, 3}).shape(), (Shape{0, 3}));
  // 0-d.
  EXPECT_EQ(iota({1}).reshape({}).shape(), Shape{});
  EXPECT_EQ(iota({}).reshape({1, 1}).shape(), (Shape{1, 1}));
}

TEST(Reshape, Errors) {
  const Tensor a = iota({2, 3, 4});
  EXPECT_THROW(a.reshape({5, 5}), std::invalid_argument);
  EXPECT_THROW(a.reshape({-1, -1}), std::invalid_argument);
  EXPECT_THROW(a.reshape({5, -1}), std::invalid_argument);
  EXPECT_THROW(a.reshape({-2, 12}), std::invalid_argument);
  EXPECT_THROW(iota({0, 3}).reshape({-1, 0}), std::invalid_argument);  // NumPy: ambiguous
  EXPECT_THROW(iota({2}).reshape({}), std::invalid_argument);
}

TEST(ViewAs, ReinterpretsBits) {
  const Tensor f = Tensor::from_f32({3}, std::vector<float>{1.0f, -2.0f, 0.0f});
  const Tensor i = f.view_as(DType::kInt32);
  EXPECT_EQ(i.storage(), f.storage());
  EXPECT_EQ(i.to_i64_vector(), (std::vector<int64_t>{0x3f800000, static_cast<int32_t>(0xc0000000u), 0}));
  EXPECT_EQ(f.view_as(DType::kUInt32).to_i64_vector(), (std::vector<int64_t>{0x3f800000, 0xc0000000ll, 0}));
  const Tensor b = Tensor::from_f32({2}, std::vector<float>{1.0f, -0.5f}, DType::kBFloat16);
  EXPECT_EQ(b.view_as(DType::kUInt16).to_i64_vector(), (std::vector<int64_t>{0x3f80, 0xbf00}));
  const Tensor u = Tensor::from_i64({1}, std::vector<int64_t>{0x4049}, DType::kUInt16);
  EXPECT_EQ(u.view_as(DType::kBFloat16).item(), 3.140625);
  EXPECT_EQ(Tensor::from_i64({1}, std::vector<int64_t>{0x38}, DType::kUInt8).view_as(DType::kFloat8E4M3).item(), 1.0);
  // A contiguous slice with an offset is fine; a strided one is not.
  EXPECT_EQ(f.slice(0, 1, 3).view_as(DType::kInt32).to_i64_vector()[0], static_cast<int32_t>(0xc0000000u));
  EXPECT_THROW(f.view_as(DType::kInt16), std::invalid_argument);
  EXPECT_THROW(f.view_as(DType::kBFloat16), std::invalid_argument);
  EXPECT_THROW(iota({4}).slice(0, N, N, 2).view_as(DType::kFloat32), std::invalid_argument);
  EXPECT_THROW(iota({2, 3}).transpose().view_as(DType::kFloat32), std::invalid_argument);
}

// ================================================================================================
// copy, contiguous, astype
// ================================================================================================

TEST(Copies, CopyAndContiguous) {
  const Tensor a = iota({3, 4});
  EXPECT_EQ(a.contiguous().storage(), a.storage());
  const Tensor c = a.copy();
  EXPECT_NE(c.storage(), a.storage());
  EXPECT_EQ(c.to_i64_vector(), a.to_i64_vector());
  const Tensor t = a.transpose();
  const Tensor tc = t.contiguous();
  EXPECT_NE(tc.storage(), a.storage());
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_EQ(tc.strides(), (Strides{3, 1}));
  EXPECT_EQ(tc.offset(), 0);
  EXPECT_EQ(tc.to_i64_vector(), t.to_i64_vector());
  // A contiguous window with an offset is contiguous: no copy.
  const Tensor w = a.slice(0, 1, 3);
  EXPECT_TRUE(w.is_contiguous());
  EXPECT_EQ(w.contiguous().storage(), a.storage());
  // Size-1 axes with odd strides are still contiguous.
  EXPECT_TRUE(a.slice(0, 1, 2).is_contiguous());
  // Copying a broadcast view materialises it.
  const Tensor bc = iota({1, 3}).broadcast_to({2, 3}).copy();
  EXPECT_EQ(bc.strides(), (Strides{3, 1}));
  EXPECT_EQ(bc.to_i64_vector(), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  // Modifying the copy leaves the original alone.
  Tensor m = a.copy();
  m.fill(7);
  EXPECT_EQ(a.to_i64_vector(), range_vec(0, 12));
}

TEST(Copies, AstypeMatchesNumPy) {
  // Integer → integer wraps (NumPy astype); integer → float32 / float16 rounds to nearest even;
  // float32 → float16 / bfloat16 / float8 rounds to nearest even (bfloat16 and float8 rounding
  // computed in the oracle with integer bit operations / frexp, not by any library).
  Rng rng(21);
  Oracle o;
  struct Case {
    Tensor src;
    DType to;
    int id;
  };
  std::vector<Case> cases;
  const std::vector<DType> ints = {DType::kInt8,  DType::kInt16,  DType::kInt32,
                                   DType::kUInt8, DType::kUInt16, DType::kUInt32};
  for (DType from : ints) {
    const IntRange r = int_dtype_range(from);
    std::vector<int64_t> v;
    for (int i = 0; i < 300; ++i) v.push_back(rng.integers(r.lo, r.hi + 1));
    for (int64_t x : {r.lo, r.hi, int64_t{0}, int64_t{1}, (int64_t{1} << 24) + 1, int64_t{16777219}})
      v.push_back(std::clamp(x, r.lo, r.hi));
    // Strided source view.
    const Tensor src = Tensor::from_i64({static_cast<int64_t>(v.size())}, v, from).slice(0, N, N, -1);
    for (DType to : ints)
      cases.push_back({src, to, o.add({{"kind", "astype"}, {"a", o.input(src)}, {"rnd", dtype_name(to)}})});
    for (DType to : {DType::kFloat32, DType::kFloat16, DType::kBool})
      cases.push_back({src, to, o.add({{"kind", "astype"}, {"a", o.input(src)}, {"rnd", dtype_name(to)}})});
  }
  std::vector<float> f;
  for (int i = 0; i < 2000; ++i) {
    const double scale = std::pow(2.0, rng.uniform() * 40 - 24);  // includes fp8 / fp16 subnormals and overflow
    f.push_back(static_cast<float>(rng.normal() * scale));
  }
  // Halfway points of bfloat16 (ties to even both ways) and the specials.
  for (float x :
       {1.00390625f, 1.01171875f, -1.00390625f, 3.3895314e38f, 0.0f,   -0.0f,  kInf,     -kInf,    kNaN,     1e-45f,
        240.0f,      247.9f,      248.0f,       448.0f,        464.0f, 465.0f, 57344.0f, 61440.0f, 65519.0f, 65520.0f})
    f.push_back(x);
  const Tensor fs = Tensor::from_f32({static_cast<int64_t>(f.size())}, f).reshape({-1, 4}).transpose();
  for (DType to :
       {DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3, DType::kFloat8E4M3FN, DType::kFloat8E5M2, DType::kBool})
    cases.push_back({fs, to, o.add({{"kind", "astype"}, {"a", o.input(fs)}, {"rnd", dtype_name(to)}})});
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) {
    const Tensor got = c.src.astype(c.to);
    EXPECT_EQ(got.dtype(), c.to);
    EXPECT_TRUE(got.is_contiguous());
    EXPECT_TRUE(same_values(got, o.answer(c.id),
                            std::string(dtype_name(c.src.dtype())) + " → " + std::string(dtype_name(c.to))));
  }
}

TEST(Copies, AstypeFloatToIntTruncatesSaturatesAndZeroesNaN) {
  // The engines' conversion (dtype.h store_f32), not NumPy's undefined behaviour.
  const Tensor f =
      Tensor::from_f32({9}, std::vector<float>{2.9f, -2.9f, 1e10f, -1e10f, kInf, -kInf, kNaN, 0.5f, -0.5f});
  EXPECT_EQ(f.astype(DType::kInt8).to_i64_vector(), (std::vector<int64_t>{2, -2, 127, -128, 127, -128, 0, 0, 0}));
  EXPECT_EQ(f.astype(DType::kUInt8).to_i64_vector(), (std::vector<int64_t>{2, 0, 255, 0, 255, 0, 0, 0, 0}));
  EXPECT_EQ(f.astype(DType::kInt32).to_i64_vector(),
            (std::vector<int64_t>{2, -2, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0, 0, 0}));
  EXPECT_EQ(f.astype(DType::kUInt32).to_i64_vector(),
            (std::vector<int64_t>{2, 0, 4294967295ll, 0, 4294967295ll, 0, 0, 0, 0}));
  EXPECT_EQ(f.astype(DType::kBool).to_i64_vector(), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  // Saturating float8 conversions clamp to the largest finite value.
  const Tensor big = Tensor::from_f32({3}, std::vector<float>{1000.0f, -kInf, kNaN});
  const auto sat = big.astype(DType::kFloat8E4M3, Fp8Overflow::kSaturating).to_f32_vector();
  EXPECT_EQ(sat[0], 240.0f);
  EXPECT_EQ(sat[1], -240.0f);
  EXPECT_TRUE(std::isnan(sat[2]));
  const auto nonsat = big.astype(DType::kFloat8E4M3FN).to_f32_vector();
  EXPECT_TRUE(std::isnan(nonsat[0]));  // e4m3fn has no inf
  // bool → anything is 0 / 1.
  const Tensor b = Tensor::from_i64({2}, std::vector<int64_t>{1, 0}, DType::kBool);
  EXPECT_EQ(b.astype(DType::kFloat32).to_f32_vector(), (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ(b.astype(DType::kInt8).to_i64_vector(), (std::vector<int64_t>{1, 0}));
  // Large int32 values stay exact through int → int conversions (no detour through float32).
  const Tensor big_int = Tensor::from_i64({2}, std::vector<int64_t>{16777217, -2147483647}, DType::kInt32);
  EXPECT_EQ(big_int.astype(DType::kUInt32).to_i64_vector(), (std::vector<int64_t>{16777217, 2147483649ll}));
}

// ================================================================================================
// assign, fill
// ================================================================================================

TEST(Assign, BroadcastIntoStridedViewsMatchesNumPy) {
  // dst_view[...] = src with broadcasting, for destination views of every layout; the whole base
  // is compared, so elements outside the view must be untouched.
  Rng rng(31);
  Oracle o;
  struct Case {
    Tensor base;  // after the assignment
    std::string what;
    int id;
  };
  std::vector<Case> cases;
  const std::vector<std::pair<json, Shape>> dsts = {
      {json::array(), {4, 6}},
      {json::array({json::array({"slice", 1, 1, nullptr, 2})}), {4, 3}},
      {json::array({json::array({"slice", 0, nullptr, nullptr, -1}), json::array({"slice", 1, 5, 0, -2})}), {4, 3}},
      {json::array({json::array({"transpose", nullptr})}), {6, 4}},
      {json::array({json::array({"select", 1, -2})}), {4}},
      {json::array({json::array({"select", 0, 2}), json::array({"slice", 0, nullptr, nullptr, 3})}), {2}},
      {json::array({json::array({"reshape", {2, 2, 6}}), json::array({"swapaxes", 0, 2})}), {6, 2, 2}},
  };
  for (DType dt : {DType::kInt32, DType::kFloat32, DType::kInt8}) {
    for (const auto& [ops, vshape] : dsts) {
      for (int variant = 0; variant < 3; ++variant) {
        Tensor base = iota({4, 6}, dt);
        const std::string base_file = o.input(base);
        Tensor view = base;
        for (const auto& op : ops) {
          const std::string name = op[0];
          if (name == "slice") {
            auto opt = [](const json& j) { return j.is_null() ? N : j.get<int64_t>(); };
            view = view.slice(op[1].get<int>(), Slice{opt(op[2]), opt(op[3]), op[4].get<int64_t>()});
          } else if (name == "transpose") {
            view = view.transpose();
          } else if (name == "select") {
            view = view.select(op[1].get<int>(), op[2].get<int64_t>());
          } else if (name == "reshape") {
            const auto s = op[1].get<std::vector<int64_t>>();
            view = view.reshape(Shape(s.begin(), s.end()));
          } else {
            view = view.swapaxes(op[1].get<int>(), op[2].get<int>());
          }
        }
        ASSERT_EQ(view.shape(), vshape) << ops.dump();
        ASSERT_EQ(view.storage(), base.storage()) << ops.dump();
        // The source: the full shape, its last axis only, or a scalar; values -100 - k.
        Shape sshape = variant == 0 ? vshape : (variant == 1 ? Shape{vshape.back()} : Shape{});
        std::vector<int64_t> sv(static_cast<size_t>(shape_numel(sshape)));
        for (size_t k = 0; k < sv.size(); ++k) sv[k] = -100 - static_cast<int64_t>(k);
        Tensor src = Tensor::from_i64(sshape, sv, dt);
        if (variant == 0 && sshape.size() >= 2) src = src.transpose().copy().transpose();  // strided source
        view.assign(src);
        cases.push_back({base, ops.dump() + " ← " + shape_str(sshape) + " " + std::string(dtype_name(dt)),
                         o.add({{"kind", "assign"}, {"a", base_file}, {"dst_ops", ops}, {"src", o.input(src)}})});
      }
    }
  }
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) EXPECT_TRUE(same_values(c.base, o.answer(c.id), c.what));
}

TEST(Assign, ConvertsAndRejectsBadShapes) {
  Tensor a = Tensor::zeros({2, 3}, DType::kInt8);
  a.assign(Tensor::from_f32({3}, std::vector<float>{1.9f, -300.0f, kNaN}));
  EXPECT_EQ(a.to_i64_vector(), (std::vector<int64_t>{1, -128, 0, 1, -128, 0}));
  a.assign(Tensor::from_i64({2, 1}, std::vector<int64_t>{300, -1}, DType::kInt32));  // int → int wraps
  EXPECT_EQ(a.to_i64_vector(), (std::vector<int64_t>{44, 44, 44, -1, -1, -1}));
  Tensor h = Tensor::zeros({2}, DType::kBFloat16);
  h.assign(Tensor::from_f32({2}, std::vector<float>{1.00390625f, 1.01171875f}));  // ties to even
  EXPECT_EQ(h.to_f32_vector(), (std::vector<float>{1.0f, 1.015625f}));
  EXPECT_THROW(a.assign(Tensor::zeros({4}, DType::kInt8)), std::invalid_argument);
  EXPECT_THROW(a.assign(Tensor::zeros({3, 2, 3}, DType::kInt8)), std::invalid_argument);
  EXPECT_THROW(a.assign(Tensor()), std::invalid_argument);
  Tensor undefined;
  EXPECT_THROW(undefined.assign(a), std::invalid_argument);
}

TEST(Assign, OverlappingSourceAndDestinationMatchNumPy) {
  // NumPy makes `x[...] = y` correct when y overlaps x (it buffers the source). tensor.h does not
  // restrict assign to disjoint views, so a shifted, reversed or transposed view of the same storage
  // must give NumPy's answer.
  Oracle o;
  struct Case {
    Tensor base;
    std::string what;
    int id;
  };
  std::vector<Case> cases;
  auto add = [&](const Shape& shape, const json& dst_ops, const json& src_ops) {
    Tensor base = iota(shape);
    const std::string file = o.input(base);
    Tensor dst = base, src = base;
    for (const json* ops : {&dst_ops, &src_ops}) {
      Tensor& v = ops == &dst_ops ? dst : src;
      for (const auto& op : *ops) v = ViewOp{op}.apply(v);
    }
    dst.assign(src);
    cases.push_back({base, dst_ops.dump() + " = " + src_ops.dump(),
                     o.add({{"kind", "assign"}, {"a", file}, {"dst_ops", dst_ops}, {"src_ops", src_ops}})});
  };
  // x[1:] = x[:-1] and x[:-1] = x[1:] (memmove-like shifts).
  add({10}, json::array({json::array({"slice", 0, 1, nullptr, 1})}),
      json::array({json::array({"slice", 0, nullptr, -1, 1})}));
  add({10}, json::array({json::array({"slice", 0, nullptr, -1, 1})}),
      json::array({json::array({"slice", 0, 1, nullptr, 1})}));
  // x[...] = x[::-1]
  add({9}, json::array(), json::array({json::array({"slice", 0, nullptr, nullptr, -1})}));
  // x[...] = x.T (square)
  add({4, 4}, json::array(), json::array({json::array({"transpose", nullptr})}));
  // x[::2] = x[1::2][::-1]... a shifted strided overlap in 2-D rows
  add({6, 5}, json::array({json::array({"slice", 0, 1, nullptr, 1})}),
      json::array({json::array({"slice", 0, nullptr, -1, 1})}));
  // x[1:, :4] = x[:-1, :4]: rows that cannot merge into one run, each overlapping the next.
  add({6, 5}, json::array({json::array({"slice", 0, 1, nullptr, 1}), json::array({"slice", 1, nullptr, 4, 1})}),
      json::array({json::array({"slice", 0, nullptr, -1, 1}), json::array({"slice", 1, nullptr, 4, 1})}));
  ASSERT_TRUE(o.run());
  for (const auto& c : cases) EXPECT_TRUE(same_values(c.base, o.answer(c.id), c.what));
}

// A copy between views of one type moves the bytes, whatever the layouts: NaN payloads, bfloat16
// and fp8 bit patterns arrive unchanged, also through a transposed destination
// (visited in its own memory order) and a strided, reversed source.
TEST(Assign, SameTypeCopiesMoveTheBytesThroughAnyLayout) {
  for (const DType bits : {DType::kUInt8, DType::kUInt16, DType::kUInt32}) {
    const int64_t size = dtype_size(bits);
    std::vector<int64_t> vals(6 * 9);
    for (size_t i = 0; i < vals.size(); ++i)
      vals[i] = static_cast<int64_t>((0x9e3779b97f4a7c15ull * (i + 1)) >> (64 - 8 * size));
    const Tensor raw = Tensor::from_i64({6, 9}, vals, bits);
    const DType as = size == 1 ? DType::kFloat8E4M3 : size == 2 ? DType::kBFloat16 : DType::kFloat32;
    const Tensor src = raw.view_as(as).slice(1, 8, -10, -1);  // columns reversed
    Tensor big = Tensor::zeros({9 * 2, 6 + 1}, bits);
    Tensor dst = big.slice(0, 0, 18, 2).slice(1, 1, 7).transpose();  // [6, 9], column-major
    Tensor typed(dst.storage(), as, dst.shape(), dst.strides(), dst.offset());
    typed.assign(src);
    EXPECT_EQ(dst.to_i64_vector(), raw.slice(1, 8, -10, -1).to_i64_vector()) << dtype_name(bits);
    // Nothing outside the view changed.
    EXPECT_EQ(big.slice(0, 1, 18, 2).to_i64_vector(), std::vector<int64_t>(9 * 7, 0)) << dtype_name(bits);
    EXPECT_EQ(big.slice(1, 0, 1).to_i64_vector(), std::vector<int64_t>(18, 0)) << dtype_name(bits);
  }
}

// A fill through a transposed, strided view writes exactly its elements.
TEST(Fill, ThroughATransposedViewWritesExactlyItsElements) {
  Tensor t = Tensor::zeros({4, 6, 5}, DType::kUInt8);
  Tensor v = t.slice(1, 1, 6, 2).transpose(std::vector<int>{2, 0, 1});  // [5, 4, 3]
  v.fill(7);
  const std::vector<int64_t> got = t.to_i64_vector();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j)
      for (int64_t k = 0; k < 5; ++k)
        EXPECT_EQ(got[static_cast<size_t>((i * 6 + j) * 5 + k)], j % 2 == 1 ? 7 : 0) << i << j << k;
}

TEST(Fill, SaturatesIntegersAndRoundsFloats) {
  struct Row {
    DType dt;
    double value;
    double want;
  };
  const Row rows[] = {
      {DType::kInt8, 300, 127},
      {DType::kInt8, -1e10, -128},
      {DType::kInt8, 2.9, 2},
      {DType::kInt8, -2.9, -2},
      {DType::kInt8, NAN, 0},
      {DType::kInt8, INFINITY, 127},
      {DType::kUInt8, -5, 0},
      {DType::kUInt8, 255.99, 255},
      {DType::kUInt16, 70000, 65535},
      {DType::kInt16, -40000, -32768},
      {DType::kInt32, 2147483647.0, 2147483647.0},
      {DType::kInt32, 2147483648.0, 2147483647.0},
      {DType::kInt32, -2147483649.0, -2147483648.0},
      {DType::kInt32, 16777217, 16777217},  // exact: no detour through float32
      {DType::kUInt32, 5e9, 4294967295.0},
      {DType::kUInt32, 4294967295.5, 4294967295.0},
      {DType::kUInt32, -INFINITY, 0},
      {DType::kBool, 0.5, 1},
      {DType::kBool, 0, 0},
      {DType::kBool, -2, 1},
      {DType::kBool, NAN, 1},
      {DType::kFloat16, 1e5, INFINITY},
      {DType::kFloat16, 1.0 / 3, 0.333251953125},
      {DType::kBFloat16, 1.0 / 3, 0.333984375},
      {DType::kFloat8E4M3, 1000, INFINITY},
      {DType::kFloat8E4M3FN, 300, 288},
      {DType::kFloat32, 0.1, 0.1f},
  };
  for (const Row& r : rows) {
    Tensor t = Tensor::zeros({2, 3}, r.dt);
    t.fill(r.value);
    for (double got : t.astype(DType::kFloat32).to_f32_vector())
      EXPECT_EQ(got, static_cast<double>(static_cast<float>(r.want))) << dtype_name(r.dt) << " fill(" << r.value << ")";
    if (dtype_is_int(r.dt)) {
      for (int64_t got : t.to_i64_vector())
        EXPECT_EQ(got, static_cast<int64_t>(r.want)) << dtype_name(r.dt) << " fill(" << r.value << ")";
    }
    EXPECT_EQ(Tensor::full({2}, r.dt, r.value).to_i64_vector(), t.slice(1, 0, 2).select(0, 1).to_i64_vector());
  }
  // A fill through a strided view leaves the other elements alone.
  Tensor a = iota({4, 5});
  Tensor v = a.slice(0, N, N, -2).slice(1, 1, 4, 2);  // rows 3, 1; cols 1, 3
  v.fill(-7);
  const auto got = a.to_i64_vector();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      const bool hit = (i == 3 || i == 1) && (j == 1 || j == 3);
      EXPECT_EQ(got[i * 5 + j], hit ? -7 : i * 5 + j) << i << "," << j;
    }
}

// ================================================================================================
// Element access on strided views; construction errors
// ================================================================================================

TEST(Access, VectorsOfStridedViewsAreInCOrder) {
  const Tensor a = iota({3, 4}, DType::kInt16);
  const Tensor t = a.transpose().slice(0, N, N, -1);  // [4, 3]: column j = 3 - i
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) want.push_back(j * 4 + (3 - i));
  EXPECT_EQ(t.to_i64_vector(), want);
  std::vector<float> wantf(want.begin(), want.end());
  EXPECT_EQ(t.to_f32_vector(), wantf);
  const Tensor b =
      Tensor::from_f32({2}, std::vector<float>{1.5f, -2.25f}, DType::kBFloat16).expand_dims(0).broadcast_to({3, 2});
  EXPECT_EQ(b.to_f32_vector(), (std::vector<float>{1.5f, -2.25f, 1.5f, -2.25f, 1.5f, -2.25f}));
  EXPECT_TRUE(iota({0, 3}).to_f32_vector().empty());
  EXPECT_TRUE(iota({0, 3}).to_i64_vector().empty());
  // to_f32_vector of a large int32 rounds to nearest float32; to_i64_vector is exact.
  const Tensor big = Tensor::from_i64({1}, std::vector<int64_t>{16777217}, DType::kInt32);
  EXPECT_EQ(big.to_f32_vector()[0], 16777216.0f);
  EXPECT_EQ(big.to_i64_vector()[0], 16777217);
  EXPECT_EQ(big.item(), 16777217.0);
  // Floats as int64 truncate toward zero.
  EXPECT_EQ(Tensor::from_f32({2}, std::vector<float>{-2.5f, 2.5f}).to_i64_vector(), (std::vector<int64_t>{-2, 2}));
  // get_f32 / set_f32 / ptr_at on a view.
  Tensor m = iota({3, 4}, DType::kFloat32);
  Tensor mv = m.slice(1, 3, 0, -1);  // cols 3, 2, 1
  const int64_t idx[] = {2, 0};
  EXPECT_EQ(mv.get_f32(idx), 11.0f);
  mv.set_f32(idx, -1.0f);
  const int64_t base_idx[] = {2, 3};
  EXPECT_EQ(m.get_f32(base_idx), -1.0f);
  const int64_t bad[] = {3, 0};
  const int64_t neg[] = {-1, 0};
  const int64_t short_idx[] = {1};
  EXPECT_THROW(mv.get_f32(bad), std::invalid_argument);
  EXPECT_THROW(mv.get_f32(neg), std::invalid_argument);
  EXPECT_THROW(mv.get_f32(short_idx), std::invalid_argument);
  EXPECT_THROW(iota({2}).item(), std::invalid_argument);
  EXPECT_EQ(iota({1, 1}).item(), 0.0);
}

TEST(Construction, ErrorsAndShapes) {
  EXPECT_THROW(Tensor::empty({2, -1}, DType::kFloat32), std::invalid_argument);
  EXPECT_THROW(Tensor::from_f32({2, 2}, std::vector<float>{1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(Tensor::from_i64({2}, std::vector<int64_t>{1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}, DType::kFloat32), std::invalid_argument);
  EXPECT_THROW(iota({2, 3}).dim(2), std::invalid_argument);
  EXPECT_EQ(iota({2, 3}).dim(-1), 3);
  EXPECT_EQ(iota({2, 3}).dim(-2), 2);
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (Strides{3, 3, 1}));
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({4, 0}), 0);
  EXPECT_FALSE(Tensor().defined());
  const Tensor z = Tensor::zeros({3}, DType::kBFloat16);
  EXPECT_EQ(z.to_f32_vector(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(z.nbytes(), 6);
}

// Storages on either side of the huge-page size (their own mappings from 4 MiB on): zero-filled
// when asked, writable to their last byte, independent of each other, and copied exactly.
TEST(Storage, LargeAndSmallAllocationsHoldTheirBytes) {
  for (const int64_t n : {int64_t{1} << 10, (int64_t{4} << 20) - 64, int64_t{4} << 20, (int64_t{6} << 20) + 4}) {
    SCOPED_TRACE(n);
    Tensor z = Tensor::zeros({n / 4}, DType::kFloat32);
    const auto* zb = static_cast<const uint8_t*>(z.data());
    ASSERT_TRUE(std::all_of(zb, zb + z.nbytes(), [](uint8_t b) { return b == 0; }));
    Tensor u = Tensor::uninitialized({n / 4}, DType::kFloat32);
    auto* ub = static_cast<float*>(u.data());
    for (int64_t i = 0; i < n / 4; ++i) ub[i] = static_cast<float>(i % 1000);
    const Tensor c = u.copy();
    EXPECT_EQ(std::memcmp(c.data(), u.data(), static_cast<size_t>(u.nbytes())), 0);
    EXPECT_EQ(static_cast<const float*>(c.data())[n / 4 - 1], static_cast<float>((n / 4 - 1) % 1000));
    EXPECT_TRUE(std::all_of(zb, zb + z.nbytes(), [](uint8_t b) { return b == 0; }));
  }
}

}  // namespace
}  // namespace nki_agent
