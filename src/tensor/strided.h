// tensor/strided.h — walking several same-shaped strided views row by row (internal to tensor/).
//
// for_each_row visits every element of up to kMaxOperands views of one shape. It first merges
// axes that are contiguous in every operand and drops size-1 axes, so a contiguous tensor is one
// row; then it calls fn(ptrs, n, strides) once per innermost row, with the row's first element
// pointers and the innermost strides (in elements). Elementwise kernels put their fast paths on
// unit or zero strides there.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "tensor/tensor.h"

namespace nki_agent {

inline constexpr int kMaxOperands = 4;
using RowPtrs = std::array<void*, kMaxOperands>;

template <typename Fn>
void for_each_row(std::initializer_list<const Tensor*> ops, Fn&& fn) {
  const int nops = static_cast<int>(ops.size());
  if (nops == 0 || nops > kMaxOperands) throw std::invalid_argument("for_each_row: bad operand count");
  const Tensor* t0 = *ops.begin();
  const Shape& shape = t0->shape();
  const int rank = t0->ndim();
  for (const Tensor* t : ops)
    if (t->shape() != shape) throw std::invalid_argument("for_each_row: operands differ in shape");
  if (t0->numel() == 0) return;

  // Collapse: keep axes of size > 1, merging an axis into the next when all operands allow it.
  std::vector<int64_t> dims;
  std::vector<std::array<int64_t, kMaxOperands>> strides;
  for (int ax = 0; ax < rank; ++ax) {
    if (shape[ax] == 1) continue;
    std::array<int64_t, kMaxOperands> st{};
    int k = 0;
    for (const Tensor* t : ops) st[k++] = t->strides()[ax];
    if (!dims.empty()) {
      bool merge = true;
      for (int o = 0; o < nops; ++o)
        if (strides.back()[o] != st[o] * shape[ax]) merge = false;
      if (merge) {
        dims.back() *= shape[ax];
        strides.back() = st;
        continue;
      }
    }
    dims.push_back(shape[ax]);
    strides.push_back(st);
  }
  if (dims.empty()) {  // a single element
    dims.push_back(1);
    strides.push_back({});
  }

  RowPtrs base{};
  std::array<int64_t, kMaxOperands> isz{};
  {
    int k = 0;
    for (const Tensor* t : ops) {
      base[k] = const_cast<void*>(t->data());
      isz[k] = t->itemsize();
      ++k;
    }
  }
  const int outer = static_cast<int>(dims.size()) - 1;
  const int64_t n = dims[outer];
  const int64_t* inner = strides[outer].data();
  std::vector<int64_t> idx(static_cast<size_t>(outer), 0);
  RowPtrs p = base;
  while (true) {
    fn(p, n, inner);
    // Advance the odometer over the outer axes.
    int ax = outer - 1;
    for (; ax >= 0; --ax) {
      if (++idx[ax] < dims[ax]) break;
      idx[ax] = 0;
    }
    if (ax < 0) return;
    for (int o = 0; o < nops; ++o) {
      int64_t off = 0;
      for (int a = 0; a < outer; ++a) off += idx[a] * strides[a][o];
      p[o] = static_cast<uint8_t*>(base[o]) + off * isz[o];
    }
  }
}

// Whether t's axes are in memory order already (see memory_order; no permutation needed, nothing
// allocated).
inline bool in_memory_order(const Tensor& t) {
  int64_t prev = -1;
  for (int ax = 0; ax < t.ndim(); ++ax) {
    if (t.shape()[static_cast<size_t>(ax)] == 1) continue;
    const int64_t s = t.strides()[static_cast<size_t>(ax)], a = s < 0 ? -s : s;
    if (prev >= 0 && a > prev) return false;
    prev = a;
  }
  return true;
}

// The axis order that walks `t` through memory: its axes sorted by stride, largest first (stable,
// so equal strides keep their order). An elementwise operation whose elements do not depend on each
// other (a fill, a copy between views that do not overlap) may visit them in this order: then
// for_each_row's rows are the view's contiguous runs, not a column's scattered elements.
inline std::vector<int> memory_order(const Tensor& t) {
  std::vector<int> perm(static_cast<size_t>(t.ndim()));
  for (int i = 0; i < t.ndim(); ++i) perm[static_cast<size_t>(i)] = i;
  auto size_of = [&](int ax) { return t.shape()[static_cast<size_t>(ax)]; };
  auto stride_of = [&](int ax) {
    const int64_t s = t.strides()[static_cast<size_t>(ax)];
    return size_of(ax) == 1 ? int64_t{0} : (s < 0 ? -s : s);  // a size-1 axis goes anywhere
  };
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) { return stride_of(a) > stride_of(b); });
  return perm;
}

// ---- row conversions shared by the elementwise and reduction kernels ----
// Rows are given as a byte pointer to the first element, the dtype and the element stride.

// Widens `n` elements of type t at byte pointer p with element stride st into buf (float32).
inline const float* widen_f32(const uint8_t* p, DType t, int64_t st, int64_t n, float* buf) {
  if (t == DType::kFloat32 && st == 1) return reinterpret_cast<const float*>(p);
  if (st == 1) {
    convert_to_f32(p, t, buf, n);
  } else if (st == 0) {
    std::fill(buf, buf + n, load_f32(p, t));
  } else {
    const int64_t bs = st * dtype_size(t);
    for (int64_t i = 0; i < n; ++i) buf[i] = load_f32(p + i * bs, t);
  }
  return buf;
}

inline void widen_i64(const uint8_t* p, DType t, int64_t st, int64_t n, int64_t* buf) {
  const int64_t bs = st * dtype_size(t);
  for (int64_t i = 0; i < n; ++i) buf[i] = load_i64(p + i * bs, t);
}

inline void narrow_f32(const float* v, uint8_t* p, DType t, int64_t st, int64_t n) {
  if (st == 1) {
    if (t == DType::kFloat32 && reinterpret_cast<const uint8_t*>(v) == p) return;
    convert_from_f32(v, p, t, n);
  } else {
    const int64_t bs = st * dtype_size(t);
    for (int64_t i = 0; i < n; ++i) store_f32(p + i * bs, t, v[i]);
  }
}

inline void narrow_i64(const int64_t* v, uint8_t* p, DType t, int64_t st, int64_t n) {
  const int64_t bs = st * dtype_size(t);
  for (int64_t i = 0; i < n; ++i) store_i64(p + i * bs, t, v[i]);
}

}  // namespace nki_agent
