#include "nki/iteration_tags.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace nki_agent {
namespace {

constexpr size_t kMaxRank = 16;
// Parts written before they are applied to the per-element tags anyway: kMaxWrites, or, while every
// part is a box, one per kElementsPerBoxWrite elements of the tensor (at most kMaxBoxWrites). A box
// is checked against the boxes written in a few comparisons each; applying them costs 8 bytes per
// element of the tensor (a [24, 512, 1024] output stored tile by tile would need 100 MB of tags).
constexpr size_t kMaxWrites = 64;
constexpr size_t kMaxBoxWrites = 4096;
constexpr int64_t kElementsPerBoxWrite = 4096;

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

std::optional<std::vector<int64_t>> view_box(const Tensor& view, const Tensor& data) {
  if (view.storage() != data.storage() || view.numel() == 0 || !data.is_contiguous()) return std::nullopt;
  const Shape& shape = data.shape();
  const size_t nd = shape.size();
  std::vector<int64_t> row(nd, 1);  // C-order strides of data
  for (size_t d = nd; d-- > 1;) row[d - 1] = row[d] * shape[d];
  int64_t rel = view.offset() - data.offset();
  if (rel < 0 || rel >= data.numel()) return std::nullopt;
  std::vector<int64_t> box(2 * nd);
  for (size_t d = 0; d < nd; ++d) {
    box[2 * d] = rel / row[d];
    box[2 * d + 1] = box[2 * d] + 1;
    rel %= row[d];
  }
  std::vector<bool> used(nd, false);
  for (size_t j = 0; j < view.shape().size(); ++j) {
    const int64_t n = view.shape()[j], s = view.strides()[j];
    if (n == 1) continue;
    size_t d = 0;
    while (d < nd && (used[d] || shape[d] == 1 || row[d] != s)) ++d;
    if (d == nd || box[2 * d] + n > shape[d]) return std::nullopt;
    used[d] = true;
    box[2 * d + 1] = box[2 * d] + n;
  }
  return box;
}

bool boxes_intersect(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  for (size_t i = 0; i + 1 < a.size(); i += 2)
    if (a[i] >= b[i + 1] || b[i] >= a[i + 1]) return false;
  return true;
}

bool IterationTags::has_loop(int64_t loop) const {
  return std::binary_search(loops_.begin(), loops_.end(), loop);
}

void IterationTags::set(const Tensor& view, const Tensor& data, int64_t tag) {
  if (view.numel() == 0) return;
  const int64_t base = data.offset(), numel = data.numel();
  numel_ = numel;
  const int64_t loop = tag >> 32;
  if (view.numel() == numel && view.offset() == base && view.is_contiguous()) {  // the whole tensor
    per_element_.clear();
    per_element_.shrink_to_fit();
    writes_.clear();
    boxes_only_ = true;
    whole_ = tag;
    loops_.assign(1, loop);
    return;
  }
  writes_.push_back(Write{view.offset() - base, view.shape(), view.strides(), tag, view_box(view, data)});
  boxes_only_ = boxes_only_ && writes_.back().box.has_value();
  if (!has_loop(loop)) loops_.insert(std::upper_bound(loops_.begin(), loops_.end(), loop), loop);
  const size_t cap =
      boxes_only_ ? std::clamp<size_t>(static_cast<size_t>(numel_ / kElementsPerBoxWrite), kMaxWrites, kMaxBoxWrites)
                  : kMaxWrites;
  if (writes_.size() > cap) apply_writes();
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
  boxes_only_ = true;
}

int64_t IterationTags::at(int64_t offset) {
  apply_writes();
  return per_element_.empty() ? whole_ : per_element_[static_cast<size_t>(offset)];
}

int64_t IterationTags::other_iterations(const Tensor& view, const Tensor& data, int64_t tag,
                                        std::vector<int64_t>* out) {
  const int64_t loop = tag >> 32;
  if (!has_loop(loop) || view.numel() == 0) return 0;
  auto other = [&](int64_t w) { return w != 0 && w != tag && (w >> 32) == loop; };
  if (per_element_.empty() && !other(whole_) && !writes_.empty()) {
    // Only the parts written since can hold another iteration's tag: when they and the view are
    // boxes, the view meets none of them, or the tags are applied and walked.
    if (const std::optional<std::vector<int64_t>> box = view_box(view, data)) {
      const bool clear = std::all_of(writes_.begin(), writes_.end(), [&](const Write& w) {
        return w.box && (!other(w.tag) || !boxes_intersect(*box, *w.box));
      });
      if (clear) return 0;
    }
  }
  const int64_t base = data.offset();
  apply_writes();
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
