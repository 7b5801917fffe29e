// tensor/strided.h — walking several same-shaped strided views row by row (internal to tensor/).
//
// for_each_row visits every element of up to kMaxOperands views of one shape. It first merges
// axes that are contiguous in every operand and drops size-1 axes, so a contiguous tensor is one
// row; then it calls fn(ptrs, n, strides) once per innermost row, with the row's first element
// pointers and the innermost strides (in elements). Elementwise kernels put their fast paths on
// unit or zero strides there.
#pragma once

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

}  // namespace nki_agent
