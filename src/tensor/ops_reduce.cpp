// Reductions over any set of axes, and argmax/argmin (see ops.h for the semantics).
//
// The input is viewed as [kept axes..., reduced axes...] and made contiguous in the compute domain
// (float32 or int64), so each output element reduces one contiguous row of K values. Float sums
// use kLanes double accumulators in a fixed interleaving: vectorisable and deterministic.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "tensor/ops.h"
#include "tensor/strided.h"

namespace nki_agent {

namespace {

constexpr int kLanes = 8;

struct ReducePlan {
  Shape out_shape;       // with or without kept size-1 axes
  std::vector<int> perm;  // kept axes first, then reduced axes
  int64_t rows = 1;      // product of kept dims
  int64_t k = 1;         // product of reduced dims
};

ReducePlan plan_reduce(const Tensor& a, std::span<const int> axes_in, bool keepdims) {
  const int nd = a.ndim();
  std::vector<bool> red(nd, axes_in.empty());
  for (int ax : axes_in) {
    int x = ax < 0 ? ax + nd : ax;
    if (x < 0 || x >= nd) throw std::invalid_argument(fmt::format("reduce: axis {} out of range for {} dimensions", ax, nd));
    if (red[x]) throw std::invalid_argument(fmt::format("reduce: axis {} repeated", ax));
    red[x] = true;
  }
  ReducePlan p;
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

double prod_f32(const float* x, int64_t n) {
  double p = 1;
  for (int64_t i = 0; i < n; ++i) p *= x[i];
  return p;
}

float extreme_f32(const float* x, int64_t n, bool want_max) {
  float m = x[0];
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return x[i];  // NaN propagates
    m = want_max ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  }
  return m;
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  static constexpr std::string_view kNames[] = {"sum", "prod", "max", "min", "mean", "all", "any"};
  return kNames[static_cast<int>(op)];
}

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

Tensor reduce(ReduceOp op, const Tensor& a, std::span<const int> axes, bool keepdims,
              std::optional<DType> out_dtype) {
  const ReducePlan p = plan_reduce(a, axes, keepdims);
  const DType ot = out_dtype.value_or(reduce_result_dtype(op, a.dtype()));
  Tensor out = Tensor::empty(p.out_shape, ot);
  if (p.rows == 0) return out;
  if (p.k == 0 && (op == ReduceOp::kMax || op == ReduceOp::kMin))
    throw std::invalid_argument(fmt::format("reduce {} over an empty axis has no identity", reduce_op_name(op)));

  const bool float_domain = dtype_is_float(a.dtype()) || op == ReduceOp::kMean;
  Tensor moved = a.transpose(p.perm);
  // Integers stay in their own type; each element is read as int64 and accumulated in int64.
  Tensor x = float_domain ? moved.astype(DType::kFloat32).contiguous() : moved.contiguous();
  auto* o = static_cast<uint8_t*>(out.data());
  const int64_t osz = out.itemsize();

  if (float_domain) {
    const float* base = x.data_as<float>();
    for (int64_t r = 0; r < p.rows; ++r) {
      const float* row = base + r * p.k;
      double v = 0;
      switch (op) {
        case ReduceOp::kSum: v = sum_f32(row, p.k); break;
        case ReduceOp::kMean: v = p.k ? sum_f32(row, p.k) / static_cast<double>(p.k) : NAN; break;
        case ReduceOp::kProd: v = prod_f32(row, p.k); break;
        case ReduceOp::kMax: v = extreme_f32(row, p.k, true); break;
        case ReduceOp::kMin: v = extreme_f32(row, p.k, false); break;
        case ReduceOp::kAll: v = std::all_of(row, row + p.k, [](float f) { return f != 0; }); break;
        case ReduceOp::kAny: v = std::any_of(row, row + p.k, [](float f) { return f != 0; }); break;
      }
      store_f32(o + r * osz, ot, static_cast<float>(v));
    }
    return out;
  }

  const auto* base = static_cast<const uint8_t*>(x.data());
  const DType xt = x.dtype();
  const int64_t xsz = x.itemsize();
  for (int64_t r = 0; r < p.rows; ++r) {
    const uint8_t* row = base + r * p.k * xsz;
    int64_t v = 0;
    switch (op) {
      case ReduceOp::kSum:
        for (int64_t i = 0; i < p.k; ++i)
          v = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(load_i64(row + i * xsz, xt)));
        break;
      case ReduceOp::kProd:
        v = 1;
        for (int64_t i = 0; i < p.k; ++i)
          v = static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(load_i64(row + i * xsz, xt)));
        break;
      case ReduceOp::kMax:
      case ReduceOp::kMin:
        v = load_i64(row, xt);
        for (int64_t i = 1; i < p.k; ++i) {
          int64_t e = load_i64(row + i * xsz, xt);
          v = op == ReduceOp::kMax ? std::max(v, e) : std::min(v, e);
        }
        break;
      case ReduceOp::kAll:
        v = 1;
        for (int64_t i = 0; i < p.k && v; ++i) v = load_i64(row + i * xsz, xt) != 0;
        break;
      case ReduceOp::kAny:
        for (int64_t i = 0; i < p.k && !v; ++i) v = load_i64(row + i * xsz, xt) != 0;
        break;
      case ReduceOp::kMean: break;  // float domain
    }
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

Tensor argmax(const Tensor& a, int axis, bool keepdims) { return arg_extreme(a, axis, keepdims, true); }
Tensor argmin(const Tensor& a, int axis, bool keepdims) { return arg_extreme(a, axis, keepdims, false); }

}  // namespace nki_agent
