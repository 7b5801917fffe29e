// nki/iteration_tags.h — per element, which nl.affine_range iteration last wrote a tensor.
//
// Two checks need it: an HBM output written by two iterations of one affine loop
// (err_unexpected_output_dependencies) and an on-chip value one iteration reads that another wrote
// (nkia_affine_range_carried_dependency). A tag is (loop << 32 | iteration), the loop being the
// instance ExecContext::affine_tag names; 0 is "not written inside an affine loop".
//
// Kernels write whole tiles far more often than parts of them, and most reads meet no tag of the
// reading loop at all, so the tags keep summaries that make those cases cheap:
// - a tensor written whole holds one tag for every element (no per-element vector);
// - `loops` lists the loops whose tags may be present: a read in a loop not listed cannot meet
//   another iteration of it, and nothing is walked;
// - writes of parts are kept as a list of (view, tag) — short, or, while every part is a box, up to
//   one per 4096 elements of the tensor — and applied to the per-element tags only when a read needs
//   them: a tile loaded slice by slice in one loop and read in another never does, and an output
//   stored block by block is checked block against block while the blocks are boxes.
// Walking elements goes by runs of the innermost axis, not element by element.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tensor/tensor.h"

namespace nki_agent {

// The elements `view` selects of `data` as a box: [lo, hi) along each of data's axes (flattened
// pairs), when view is a slice of data (contiguous) with step 1 — size-1 axes dropped or kept, axes
// in any order; nullopt otherwise. Two such boxes share elements exactly when they intersect.
std::optional<std::vector<int64_t>> view_box(const Tensor& view, const Tensor& data);
bool boxes_intersect(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

class IterationTags {
 public:
  // Tags the elements `view` selects of a tensor's `data` (`view` must lie in data's storage).
  void set(const Tensor& view, const Tensor& data, int64_t tag);
  // The elements `view` selects whose tag is of `tag`'s loop but another iteration: their offsets
  // (from data's first element) are appended to `out` when it is given, and the first such tag is
  // returned (0 when there is none).
  int64_t other_iterations(const Tensor& view, const Tensor& data, int64_t tag, std::vector<int64_t>* out);
  // The tag of the element at `offset` from the tensor's start.
  int64_t at(int64_t offset);
  // Whether no element was ever tagged.
  bool empty() const { return loops_.empty(); }

 private:
  struct Write {    // a part written, not yet applied to per_element_
    int64_t start;  // the offset of the view's first element from the tensor's start
    Shape shape;
    Strides strides;
    int64_t tag;
    std::optional<std::vector<int64_t>> box;  // view_box of the part
  };
  bool has_loop(int64_t loop) const;
  void apply_writes();

  std::vector<int64_t> per_element_;  // empty: every element holds whole_ (before writes_)
  int64_t whole_ = 0;
  int64_t numel_ = 0;
  std::vector<Write> writes_;   // in order, over per_element_ / whole_
  bool boxes_only_ = true;      // every part in writes_ has its box
  std::vector<int64_t> loops_;  // sorted: the loops (tag >> 32) whose tags may be present
};

// What the iteration analyses keep on a tensor (NkiTensor::iterations).
struct IterationState {
  // nkia_affine_range_carried_dependency: the innermost nl.affine_range iteration (ExecContext::
  // affine_tag) the tensor was created in, and for an on-chip tensor written by iterations it
  // outlives, per element the iteration that last wrote it (lazily sized; empty until then).
  int64_t created_tag = 0;
  IterationTags chip_tags;
  // err_unexpected_output_dependencies: for HBM outputs written inside affine_range loops, per
  // element the (loop << 32 | iteration) that last wrote it, to catch two iterations writing one
  // location.
  IterationTags write_tags;
};

}  // namespace nki_agent
