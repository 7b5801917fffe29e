#include "nki/iteration_tags.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace nki_agent {
namespace {

constexpr size_t kMaxRank = 16;
// Parts written before they are applied to the per-element tags anyway.
constexpr size_t kMaxWrites = 64;

// Calls f(first, count, stride) for each run along the innermost axis of the elements of the view
// (start, shape, strides), `first` being the offset of the run's first element.
template <typename F>
void for_each_run(int64_t start, const Shape& shape, const Strides& strides, F&& f) {
  if (shape_numel(shape) == 0) return;
  if (shape.empty()) {
    f(start, int64_t{1}, int64_t{1});
    return;
  }
  if (shape.size() > kMaxRank) throw std::length_error("iteration tags: a view of more than 16 axes");
  const size_t inner = shape.size() - 1;
  const int64_t count = shape[inner], stride = strides[inner];
  std::array<int64_t, kMaxRank> idx{};
  int64_t off = start;
  while (true) {
    f(off, count, stride);
    size_t d = inner;
    while (d-- > 0) {
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= idx[d] * strides[d];
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

template <typename F>
void for_each_run(const Tensor& view, int64_t base, F&& f) {
  for_each_run(view.offset() - base, view.shape(), view.strides(), f);
}

}  // namespace

bool IterationTags::has_loop(int64_t loop) const { return std::binary_search(loops_.begin(), loops_.end(), loop); }

void IterationTags::set(const Tensor& view, int64_t base, int64_t numel, int64_t tag) {
  if (view.numel() == 0) return;
  numel_ = numel;
  const int64_t loop = tag >> 32;
  if (view.numel() == numel && view.offset() == base && view.is_contiguous()) {  // the whole tensor
    per_element_.clear();
    per_element_.shrink_to_fit();
    writes_.clear();
    whole_ = tag;
    loops_.assign(1, loop);
    return;
  }
  writes_.push_back(Write{view.offset() - base, view.shape(), view.strides(), tag});
  if (!has_loop(loop)) loops_.insert(std::upper_bound(loops_.begin(), loops_.end(), loop), loop);
  if (writes_.size() > kMaxWrites) apply_writes();
}

void IterationTags::apply_writes() {
  if (writes_.empty()) return;
  if (per_element_.empty()) per_element_.assign(static_cast<size_t>(numel_), whole_);
  int64_t* tags = per_element_.data();
  for (const Write& w : writes_)
    for_each_run(w.start, w.shape, w.strides, [&](int64_t first, int64_t count, int64_t stride) {
      if (stride == 1) {
        std::fill(tags + first, tags + first + count, w.tag);
      } else {
        for (int64_t i = 0; i < count; ++i) tags[first + i * stride] = w.tag;
      }
    });
  writes_.clear();
}

int64_t IterationTags::at(int64_t offset) {
  apply_writes();
  return per_element_.empty() ? whole_ : per_element_[static_cast<size_t>(offset)];
}

int64_t IterationTags::other_iterations(const Tensor& view, int64_t base, int64_t tag, std::vector<int64_t>* out) {
  const int64_t loop = tag >> 32;
  if (!has_loop(loop) || view.numel() == 0) return 0;
  apply_writes();
  auto other = [&](int64_t w) { return w != 0 && w != tag && (w >> 32) == loop; };
  if (per_element_.empty()) {
    if (!other(whole_)) return 0;
    if (out)
      for_each_run(view, base, [&](int64_t first, int64_t count, int64_t stride) {
        for (int64_t i = 0; i < count; ++i) out->push_back(first + i * stride);
      });
    return whole_;
  }
  int64_t found = 0;
  const int64_t* tags = per_element_.data();
  for_each_run(view, base, [&](int64_t first, int64_t count, int64_t stride) {
    if (found != 0 && !out) return;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t off = first + i * stride;
      if (!other(tags[off])) continue;
      if (found == 0) found = tags[off];
      if (!out) return;
      out->push_back(off);
    }
  });
  return found;
}

}  // namespace nki_agent
