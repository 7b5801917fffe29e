// nki/written.h — which elements of the tensors a kernel allocates hold data, and how unwritten
// data flows through instructions: the nkia_uninitialized_read warning.
//
// Tensors from nl.ndarray start with nothing written (WrittenState::all_written false, kept on
// every tensor as NkiTensor::writes). Instructions hand "unwritten" on to what they compute: a
// masked load leaves the tail of a ragged tile unwritten, an unmasked nl.exp of the tile computes
// garbage in the same places, and a masked store leaves that garbage behind — a correct kernel,
// nothing to report. A result that combines unwritten elements with written ones (a reduction, a
// matmul, a scan) is garbage too; where that happened first is kept on the tensor
// (WrittenState::stale_origin). Reported are: reading a tensor that nothing wrote at all, reads
// that cannot be followed element by element (gathers, shuffles), and outputs that end up with
// unwritten or garbage elements, naming where the garbage came from.
//
// Flags are uint8 tensors, 1 for a written element; an undefined flags Tensor means "all written".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "tensor/tensor.h"

namespace nki_agent {

struct Access;  // nki/nki_tensor.h, which holds a WrittenState in every tensor
struct NkiTensor;

// What this analysis keeps on a tensor (NkiTensor::writes).
struct WrittenState {
  // Which elements hold data. Tensors the kernel allocates start with none (all_written false)
  // and, once something writes part of them, a uint8 mask of data's shape (1: written); an
  // instruction writing the whole tensor sets all_written and drops the mask. Kernel arguments and
  // constants are written from the start.
  bool all_written = true;
  Tensor written_mask;
  // Which elements any instruction stored to, whatever it stored (garbage from unwritten memory
  // included), for HBM tensors the kernel allocates: what tells an output's never-stored elements
  // from stored garbage (KernelOutcome::output_stores). A uint8 mask like written_mask, undefined
  // with all_stored.
  bool all_stored = true;
  Tensor stored_mask;
  bool unwritten_read_reported = false;  // the warning is raised once per tensor
  // Where garbage first entered the tensor's values: an instruction that combined unwritten
  // elements with written ones, and what it did. Unknown while there is none.
  SourceLoc stale_origin;
  std::string stale_what;
};

// Marks every element `a` selects as written.
void mark_written(const Access& a);
// Sets the flags of the elements dst selects to `flags` (dst's shape; undefined: all written).
void set_written(const Access& dst, const Tensor& flags);

// The elements of t that nothing stored to (WrittenState::stored_mask), as runs (first flat index in
// row-major order, length), at most max_runs of them; empty when every element was stored to.
std::vector<std::pair<int64_t, int64_t>> unstored_runs(const NkiTensor& t, size_t max_runs);

// Whether every element `a` selects is written (cheap when the whole tensor is).
bool all_written(const Access& a);
// The position (in a's view) of the first element `a` selects that nothing wrote; nullopt when all
// of them hold data.
std::optional<std::vector<int64_t>> first_unwritten(const Access& a);

// The flags of the elements `a` selects, in a's shape (contiguous); undefined when all are written.
Tensor written_flags(const Access& a);
// a's flags aligned elementwise with a destination of `shape`: the same number of elements (in
// order), one per partition ([P, 1], broadcast along the free axes) or a single element. Undefined
// when all are written; nullopt when a cannot be aligned with the shape.
std::optional<Tensor> aligned_flags(const Access& a, const Shape& shape);
// Elementwise AND of two flag tensors of one shape (undefined operands count as all ones).
Tensor and_flags(const Tensor& a, const Tensor& b);
// Combines flags over `axes` (kept as size 1): 1 where every element combined was written, else 0;
// `mixed` is set when some result combines written elements with unwritten ones.
Tensor reduce_flags(const Tensor& flags, std::span<const int> axes, bool& mixed);
// Whether every flag is 1.
bool all_ones(const Tensor& flags);

}  // namespace nki_agent
