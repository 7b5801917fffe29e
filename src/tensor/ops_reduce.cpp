// Reductions over any set of axes, and argmax/argmin (see ops.h for the semantics).
//
// The input is walked once in its own memory order, each element combined into the accumulator
// slot of its output element (double for floats, int64 for integers). A row that falls into one
// slot is summed with kLanes interleaved accumulators; a row spread over slots (reducing a leading
// axis) updates them side by side. The order depends only on the input's layout: deterministic.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/target_clones.h"
#include "tensor/ops.h"
#include "tensor/strided.h"

namespace nki_agent {

namespace {

constexpr int kLanes = 8;

struct ReducePlan {
  Shape out_shape;            // with or without kept size-1 axes
  std::vector<int> perm;      // kept axes first, then reduced axes
  int64_t rows = 1;           // product of kept dims
  int64_t k = 1;              // product of reduced dims
  std::vector<bool> reduced;  // per input axis
};

ReducePlan plan_reduce(const Tensor& a, std::span<const int> axes_in, bool keepdims) {
  const int nd = a.ndim();
  std::vector<bool> red(nd, axes_in.empty());
  for (int ax : axes_in) {
    int x = ax < 0 ? ax + nd : ax;
    if (x < 0 || x >= nd)
      throw std::invalid_argument(fmt::format("reduce: axis {} out of range for {} dimensions", ax, nd));
    if (red[x]) throw std::invalid_argument(fmt::format("reduce: axis {} repeated", ax));
    red[x] = true;
  }
  ReducePlan p;
  p.reduced = red;
  for (int i = 0; i < nd; ++i) {
    if (!red[i]) {
      p.perm.push_back(i);
      p.rows *= a.shape()[i];
      p.out_shape.push_back(a.shape()[i]);
    } else if (keepdims) {
      p.out_shape.push_back(1);
    }
  }
  for (int i = 0; i < nd; ++i)
    if (red[i]) {
      p.perm.push_back(i);
      p.k *= a.shape()[i];
    }
  return p;
}

double sum_f32(const float* x, int64_t n) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  for (int l = 0; i < n; ++i, ++l) acc[l] += x[i];
  double s = 0;
  for (double v : acc) s += v;
  return s;
}

// The largest (`max`) or smallest of n > 0 floats, in kVecLanes lanes, into *out — unless a NaN
// or a zero is among the candidates: the scalar loop's sticky NaN (which keeps its payload) and its
// first-wins ties between -0 and +0 depend on the order, which lanes change; false then, and the
// caller takes the scalar loop. Any other tie is between equal values: the order cannot show.
constexpr int kVecLanes = 16;
NKIA_TARGET_CLONES bool extreme_f32(const float* x, int64_t n, bool max, float* out) {
  if (n < kVecLanes) return false;
  float acc[kVecLanes];
  uint32_t nan[kVecLanes] = {};
  for (int l = 0; l < kVecLanes; ++l) acc[l] = x[l];
  int64_t i = kVecLanes;
  if (max) {
    for (; i + kVecLanes <= n; i += kVecLanes)
      for (int l = 0; l < kVecLanes; ++l) {
        const float e = x[i + l];
        nan[l] |= e != e ? 1u : 0u;
        acc[l] = e > acc[l] ? e : acc[l];
      }
  } else {
    for (; i + kVecLanes <= n; i += kVecLanes)
      for (int l = 0; l < kVecLanes; ++l) {
        const float e = x[i + l];
        nan[l] |= e != e ? 1u : 0u;
        acc[l] = e < acc[l] ? e : acc[l];
      }
  }
  float r = acc[0];
  uint32_t any_nan = 0;
  for (int l = 0; l < kVecLanes; ++l) {
    any_nan |= nan[l] | (acc[l] != acc[l] ? 1u : 0u);
    r = max ? (acc[l] > r ? acc[l] : r) : (acc[l] < r ? acc[l] : r);
  }
  for (; i < n; ++i) {
    const float e = x[i];
    any_nan |= e != e ? 1u : 0u;
    r = max ? (e > r ? e : r) : (e < r ? e : r);
  }
  if (any_nan != 0 || r == 0.0f) return false;
  *out = r;
  return true;
}

}  // namespace

DType reduce_result_dtype(ReduceOp op, DType a) {
  switch (op) {
    case ReduceOp::kAll:
    case ReduceOp::kAny: return DType::kBool;
    case ReduceOp::kMean: return dtype_is_float(a) ? a : DType::kFloat32;
    case ReduceOp::kMax:
    case ReduceOp::kMin: return a;
    case ReduceOp::kSum:
    case ReduceOp::kProd:
      if (dtype_is_float(a)) return a;
      // No 64-bit integers on the hardware: integer sums widen to 32 bits of the same signedness.
      if (a == DType::kUInt8 || a == DType::kUInt16 || a == DType::kUInt32) return DType::kUInt32;
      return DType::kInt32;
  }
  return a;
}

namespace {

// The accumulator slot of each input element: a view of the input's shape over a byte-sized
// "index" storage whose strides are those of the (kept-axes) output and 0 on reduced axes, so that
// walking it beside the input with for_each_row yields, per element, its slot as a byte offset.
Tensor slot_view(const Tensor& a, const ReducePlan& p, std::shared_ptr<Storage>& holder) {
  Strides st(static_cast<size_t>(a.ndim()), 0);
  int64_t step = 1;
  for (int i = a.ndim() - 1; i >= 0; --i)
    if (!p.reduced[static_cast<size_t>(i)]) {
      st[static_cast<size_t>(i)] = step;
      step *= a.shape()[static_cast<size_t>(i)];
    }
  holder = std::make_shared<Storage>(std::max<int64_t>(p.rows, 1), false);
  return Tensor(holder, DType::kUInt8, a.shape(), st, 0);
}

template <typename Acc, typename Combine>
void accumulate(const Tensor& x, const Tensor& slots, std::vector<Acc>& acc, Combine&& combine) {
  const auto* slot0 = static_cast<const uint8_t*>(slots.data());
  for_each_row({&x, &slots}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
    combine(static_cast<const uint8_t*>(p[0]), st[0], acc.data() + (static_cast<const uint8_t*>(p[1]) - slot0), st[1],
            n);
  });
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& a, std::span<const int> axes, bool keepdims, std::optional<DType> out_dtype) {
  const ReducePlan p = plan_reduce(a, axes, keepdims);
  const DType ot = out_dtype.value_or(reduce_result_dtype(op, a.dtype()));
  Tensor out = Tensor::empty(p.out_shape, ot);
  if (p.rows == 0) return out;
  if (p.k == 0 && (op == ReduceOp::kMax || op == ReduceOp::kMin))
    throw std::invalid_argument(fmt::format("reduce {} over an empty axis has no identity", reduce_op_name(op)));

  std::shared_ptr<Storage> holder;
  const Tensor slots = slot_view(a, p, holder);
  auto* o = static_cast<uint8_t*>(out.data());
  const int64_t osz = out.itemsize();
  const DType at = a.dtype();
  const int64_t asz = a.itemsize();

  if (dtype_is_float(at)) {
    double init = 0;
    if (op == ReduceOp::kProd || op == ReduceOp::kAll) init = 1;
    if (op == ReduceOp::kMax) init = -INFINITY;
    if (op == ReduceOp::kMin) init = INFINITY;
    std::vector<double> acc(static_cast<size_t>(p.rows), init);
    std::vector<float> buf(1024);
    accumulate(a, slots, acc, [&](const uint8_t* x, int64_t sx, double* dst, int64_t sd, int64_t n) {
      for (int64_t c = 0; c < n; c += 1024) {
        const int64_t m = std::min<int64_t>(1024, n - c);
        const float* v = widen_f32(x + c * sx * asz, at, sx, m, buf.data());
        double* d = dst + c * sd;
        if (sd == 0 && (op == ReduceOp::kSum || op == ReduceOp::kMean)) {
          *d += sum_f32(v, m);  // a whole row into one slot: lane-parallel
          continue;
        }
        if (float e; sd == 0 && (op == ReduceOp::kMax || op == ReduceOp::kMin) && *d == *d &&
                     extreme_f32(v, m, op == ReduceOp::kMax, &e)) {
          // e is neither NaN nor zero: the scalar rule below picks the same value.
          if (op == ReduceOp::kMax ? e > *d : e < *d) *d = e;
          continue;
        }
        auto update = [&](auto f) {
          for (int64_t i = 0; i < m; ++i) d[i * sd] = f(d[i * sd], static_cast<double>(v[i]));
        };
        switch (op) {
          case ReduceOp::kSum:
          case ReduceOp::kMean: update([](double r, double e) { return r + e; }); break;
          case ReduceOp::kProd: update([](double r, double e) { return r * e; }); break;
          // NaN is sticky: once a slot holds NaN no comparison replaces it.
          case ReduceOp::kMax:
            update([](double r, double e) { return (r != r || e != e) ? r + e : (e > r ? e : r); });
            break;
          case ReduceOp::kMin:
            update([](double r, double e) { return (r != r || e != e) ? r + e : (e < r ? e : r); });
            break;
          case ReduceOp::kAll: update([](double r, double e) { return (r != 0 && e != 0) ? 1.0 : 0.0; }); break;
          case ReduceOp::kAny: update([](double r, double e) { return (r != 0 || e != 0) ? 1.0 : 0.0; }); break;
        }
      }
    });
    for (int64_t r = 0; r < p.rows; ++r) {
      double v = acc[static_cast<size_t>(r)];
      if (op == ReduceOp::kMean) v = p.k ? v / static_cast<double>(p.k) : NAN;
      store_f32(o + r * osz, ot, static_cast<float>(v));
    }
    return out;
  }

  int64_t init = 0;
  if (op == ReduceOp::kProd || op == ReduceOp::kAll) init = 1;
  if (op == ReduceOp::kMax) init = INT64_MIN;
  if (op == ReduceOp::kMin) init = INT64_MAX;
  std::vector<int64_t> acc(static_cast<size_t>(p.rows), init);
  std::vector<int64_t> buf(1024);
  auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  accumulate(a, slots, acc, [&](const uint8_t* x, int64_t sx, int64_t* dst, int64_t sd, int64_t n) {
    for (int64_t c = 0; c < n; c += 1024) {
      const int64_t m = std::min<int64_t>(1024, n - c);
      widen_i64(x + c * sx * asz, at, sx, m, buf.data());
      int64_t* d = dst + c * sd;
      auto update = [&](auto f) {
        for (int64_t i = 0; i < m; ++i) d[i * sd] = f(d[i * sd], buf[static_cast<size_t>(i)]);
      };
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMean:
          update([&](int64_t r, int64_t e) { return wrap(static_cast<uint64_t>(r) + static_cast<uint64_t>(e)); });
          break;
        case ReduceOp::kProd:
          update([&](int64_t r, int64_t e) { return wrap(static_cast<uint64_t>(r) * static_cast<uint64_t>(e)); });
          break;
        case ReduceOp::kMax: update([](int64_t r, int64_t e) { return std::max(r, e); }); break;
        case ReduceOp::kMin: update([](int64_t r, int64_t e) { return std::min(r, e); }); break;
        case ReduceOp::kAll: update([](int64_t r, int64_t e) -> int64_t { return r != 0 && e != 0; }); break;
        case ReduceOp::kAny: update([](int64_t r, int64_t e) -> int64_t { return r != 0 || e != 0; }); break;
      }
    }
  });
  for (int64_t r = 0; r < p.rows; ++r) {
    const int64_t v = acc[static_cast<size_t>(r)];
    if (op == ReduceOp::kMean)  // the exact int64 sum, divided once
      store_f32(o + r * osz, ot, p.k ? f32_from_f64(static_cast<double>(v) / static_cast<double>(p.k)) : NAN);
    else
      store_i64(o + r * osz, ot, v);
  }
  return out;
}

static Tensor arg_extreme(const Tensor& a, int axis, bool keepdims, bool want_max) {
  const int ax[] = {axis};
  const ReducePlan p = plan_reduce(a, ax, keepdims);
  if (p.k == 0) throw std::invalid_argument("argmax/argmin of an empty axis");
  Tensor out = Tensor::empty(p.out_shape, DType::kInt32);
  int32_t* o = out.data_as<int32_t>();
  const bool is_float = dtype_is_float(a.dtype());
  Tensor x = a.transpose(p.perm).contiguous();
  const auto* base = static_cast<const uint8_t*>(x.data());
  const int64_t isz = x.itemsize();
  for (int64_t r = 0; r < p.rows; ++r) {
    const uint8_t* row = base + r * p.k * isz;
    int64_t best = 0;
    if (is_float) {
      float bv = load_f32(row, x.dtype());
      for (int64_t i = 1; i < p.k && bv == bv; ++i) {
        float v = load_f32(row + i * isz, x.dtype());
        if (v != v || (want_max ? v > bv : v < bv)) {
          bv = v;
          best = i;
        }
      }
    } else {
      int64_t bv = load_i64(row, x.dtype());
      for (int64_t i = 1; i < p.k; ++i) {
        int64_t v = load_i64(row + i * isz, x.dtype());
        if (want_max ? v > bv : v < bv) {
          bv = v;
          best = i;
        }
      }
    }
    o[r] = static_cast<int32_t>(best);
  }
  return out;
}

Tensor argmax(const Tensor& a, int axis, bool keepdims) {
  return arg_extreme(a, axis, keepdims, true);
}
Tensor argmin(const Tensor& a, int axis, bool keepdims) {
  return arg_extreme(a, axis, keepdims, false);
}

}  // namespace nki_agent
