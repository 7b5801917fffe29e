// nki/nki_tensor.h — tensors as NKI kernels see them: storage in a memory (HBM, SBUF or PSUM),
// and access patterns (views) into them that instructions read and write.
//
// An NkiTensor owns its Tensor storage. For SBUF and PSUM tensors axis 0 is the partition
// dimension (P) and the rest are free dimensions; HBM tensors are plain row-major arrays. An
// Access is a strided view of one NkiTensor — what `a[0:128, 512:1024]` evaluates to — and is
// what every instruction takes as an operand.
//
// Fresh on-chip and kernel-allocated HBM memory is poisoned (NaN for floats, kPoisonInt for
// integers), so reading data that nothing wrote shows up in the results instead of passing as 0.
// The poison is laid lazily: a fresh tensor is marked `lazy.poison_pending`, and the first read of it
// (settle_poison, called for every operand an instruction reads and for every tensor handed back
// to the host) fills exactly the elements that nothing wrote by then. The values every read sees
// are those of poisoning at allocation, but a tile that is written whole before it is read — the
// common case — is never filled at all.
//
// DMA copies from HBM into on-chip tiles are carried out lazily too (PendingCopy): the tile keeps
// the copy's source view, a matmul reading exactly what one copy wrote reads the source in place
// (read_view), and anything else — another instruction reading the tile, a write overlapping the
// copy, a write into the source, the host — carries the copies out first, in order (settle,
// before_write). A tile reloaded block by block for every output block is then never copied.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "nki/iteration_tags.h"
#include "nki/written.h"
#include "tensor/tensor.h"

namespace nki_agent {

enum class Buffer : uint8_t { kSharedHbm, kPrivateHbm, kSbuf, kPsum };

std::string_view buffer_name(Buffer b);  // "shared_hbm", "private_hbm", "sbuf", "psum"
bool buffer_is_hbm(Buffer b);
bool buffer_is_on_chip(Buffer b);  // SBUF or PSUM

// What unwritten integer memory reads as (the NKI simulator uses 4 as well).
inline constexpr int64_t kPoisonInt = 4;

// When an on-chip tensor holds data: from the first instruction that accesses it to the last (as
// instruction numbers of the launch, its trace positions). Whatever the compiler's allocator does, the
// tensor needs its storage over at least that span, so overlapping spans must fit together.
struct LiveRange {
  int64_t first = -1;  // -1: never accessed
  int64_t last = -1;
  int64_t bytes = 0;  // bytes per partition
  SourceLoc loc;      // where the kernel allocated it
  void touch(int64_t now) {
    if (first < 0) first = now;
    last = now;
  }
};

struct NkiTensor;

// A DMA copy into an on-chip tensor not yet carried out: dst (a view of the tensor's data) is to
// receive src (a view of `from`'s data, in dst's shape and type).
struct PendingCopy {
  Tensor dst;
  Tensor src;
  std::shared_ptr<NkiTensor> from;
  std::vector<int64_t> box;  // dst as [lo, hi) per axis of the tensor, flattened
};

// The lazy state (above): the poison a fresh tensor is still owed, and DMA copies not yet carried
// out — those into this on-chip tensor, in order, and the tensors holding pending copies out of it.
struct LazyState {
  bool poison_pending = false;  // the elements nothing wrote still await their poison
  std::vector<PendingCopy> pending_copies;
  std::vector<std::weak_ptr<NkiTensor>> copied_to;
};

// The launch's (nki/launch.h): which loop iteration owns the tensor and, for an auto-allocated
// PSUM or SBUF tile, the span it is live over.
struct LaunchState {
  // The loop iteration (nl.affine_range / sequential_range) the tensor was created in; 0 for the
  // kernel's top level. Once that iteration ends the tensor is out of scope.
  int64_t scope = 0;
  // The span the tensor is live over (shared with the launch, which checks the spans against
  // PSUM's capacity, and SBUF's for a warning, when the kernel has run). Null for other tensors.
  std::shared_ptr<LiveRange> live;
};

// A tensor, with the state each analysis keeps on it in a part of its own: `lazy` (this file),
// `writes` (nki/written.h), `iterations` (nki/iteration_tags.h) and `launch` (nki/launch.h).
struct NkiTensor {
  Tensor data;
  Buffer buffer = Buffer::kSharedHbm;
  std::string name;
  uint64_t id = 0;               // unique among the process's tensors, never 0: the trace's tensor identity
  bool kernel_argument = false;  // an input (or old-style output) passed in by the caller
  bool immutable = false;        // an input of a kernel that returns its outputs: writes are refused
  bool written = false;          // stored to since the launch began (the front end's flag)
  // An alias reading another tensor's bytes as another type (retyped_view): that tensor (never itself
  // an alias), whose state the alias is kept in step with (nki/aliases.h). Null otherwise.
  std::shared_ptr<NkiTensor> origin;
  // On-chip tensors with legacy block dimensions ((blocks..., par_dim(P), F...)): how many lead the
  // partition axis; 0 for tiles.
  int blocks = 0;
  Tensor matmul_written;  // PSUM: uint8 per element, 1 once a matmul wrote it (Accumulate::kAuto)
  LazyState lazy;
  WrittenState writes;
  IterationState iterations;
  LaunchState launch;
};

// When a fresh tensor gets its poison: at its first read (kLazy, see above), at once (kNow), or never
// (kNone: left as allocated; kZeros: zeros, which fresh memory holds without a write). Timing-only
// runs compute nothing and return no values, so nothing reads what their fresh tensors hold.
enum class Poison : uint8_t { kLazy, kNow, kNone, kZeros };

// A new tensor in `buffer`, poisoned as `poison` says. Checks are the caller's (nki/checks.h).
std::shared_ptr<NkiTensor> make_nki_tensor(const Shape& shape, DType dtype, Buffer buffer, std::string name,
                                           Poison poison = Poison::kLazy);
// A kernel argument (an input, or an old-style output passed in by the caller): an HBM tensor
// holding `data`, written from the start.
std::shared_ptr<NkiTensor> argument_tensor(Tensor data, std::string name);
// A constant a kernel reads (nl.shared_constant): an HBM tensor holding `data`, stored to.
std::shared_ptr<NkiTensor> constant_tensor(Tensor data);
void poison(Tensor& t);
// Lays the poison a fresh tensor is owed (see above) on the elements nothing wrote; a no-op once
// done, or when nothing is owed.
void settle_poison(NkiTensor& t);
// Makes t.data hold what the kernel wrote: its poison, then its pending copies. Call it before
// reading the tensor's data.
void settle(NkiTensor& t);

struct Access {
  std::shared_ptr<NkiTensor> tensor;
  Tensor view;  // a view into tensor->data

  DType dtype() const { return view.dtype(); }
  const Shape& shape() const { return view.shape(); }
  Buffer buffer() const { return tensor->buffer; }
  // On-chip operands: the partition count (the size of axis 0, 1 for a 0-d view) and the first
  // partition the view touches.
  int64_t partitions() const;
  int64_t start_partition() const;
  // The stride of the tensor's partition axis (past any block dimensions), in elements.
  int64_t partition_stride() const;
  // Bytes the view covers in each partition (on-chip) — free elements times the element size.
  int64_t free_bytes() const;
  std::string describe() const;  // "a[128, 512] (sbuf, bfloat16)"
};

// The whole tensor as an access.
Access whole(const std::shared_ptr<NkiTensor>& t);

// Records the DMA copy of `from` (src's data, already in dst's shape) into dst, to be carried out
// when it is needed; false (nothing recorded) when it cannot wait: a type conversion, a destination
// that is not a plain box of its tensor or is a retyped alias, or a source that is not HBM.
bool defer_copy(const Access& dst, const Access& src, const Tensor& from);
// Before an instruction writes dst: carries out dst's tensor's pending copies that the write
// overlaps (and those before them), and every pending copy that reads dst's tensor.
void before_write(const Access& dst);
// The data of `a` for reading: the source of the pending copy that wrote exactly a's elements, when
// one did (read in place, nothing copied); else a's view, once the tensor is settled.
Tensor read_view(const Access& a);

}  // namespace nki_agent
