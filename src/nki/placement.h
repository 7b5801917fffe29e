// nki/placement.h — on-chip tensors a kernel places itself, and the rules of direct-allocation
// kernels (nki-spec §2.1, §2.2, §2.4, §2.5, §5.1 #7 #29 #31, §5.2).
//
// A tensor is placed when the kernel gives its SBUF/PSUM location: legacy direct allocation
// (`buffer=ncc.sbuf.mod_alloc(...)`, `ncc.sbuf.alloc(func)` and the PSUM variants), or the current
// dialect's `nl.ndarray(..., address=(partition, byte))`. A kernel that places a tensor with the
// legacy APIs is a direct-allocation kernel: there every on-chip tensor must be placed
// ("auto- and direct-allocated tensors cannot be mixed", §2.2), so the compiler cannot add tiles
// of its own (a zero bias, an identity, the result of an nl call that is not assigned into a
// placed tensor). The current dialect's `address=` may be mixed with automatic allocation.
//
// The simulator keeps every tensor in storage of its own, so a placement changes no value; what
// it checks instead, per launch (AllocationTracker):
//   - a placement lies inside the memory: partitions [start, start + P) within pmax and starting
//     where P partitions may start (§2.5); SBUF bytes within the usable bytes per partition
//     (§2.1); a legacy PSUM tile within one 2 KiB bank of the eight (TC#2) at a 4-byte aligned
//     address (psum_min_align, §2.4); a current-dialect PSUM tensor starting on a bank boundary;
//   - two placed tiles whose bytes overlap are never live at once: a tile is live from its first
//     access to its last (per logical block of a block tensor, at the block's physical tile, so
//     the rotation of ncc.*.mod_alloc's num_free_tiles is checked too); an instruction writing a
//     whole SBUF block starts a new live span (the block's earlier data is dead). Each placement is
//     checked when its tensor is created; in the legacy dialect only in the first iteration of
//     the enclosing nl loops, as the tracer sees a loop body once (a placement computed with
//     Python arithmetic that runs on in later iterations is not the compiler's);
//   - in a direct-allocation kernel: no tensor allocated by the compiler (an explicit
//     nl.ndarray / nl.zeros on nl.sbuf / nl.psum, or a result tile of an nl / nisa call read by
//     another instruction rather than assigned into a placed tensor), and no HBM tensor other than
//     the kernel's inputs, outputs and constants (§5.2 NKI005).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "nki/isa.h"

namespace nki_agent {

// How a new tensor came to be.
enum class TensorOrigin : uint8_t {
  kExplicit,  // the kernel created it (nl.ndarray, nl.zeros, ...)
  kResult,    // the result tile of an nl / nisa call (or a copy the compiler inserts)
  kScratch,   // a part of one instruction's emulation, invisible to the kernel
};

// One logical tile's physical place. SBUF: its first partition and its first byte in each
// partition. PSUM: bank and byte within the bank (legacy), or bank -1 and the byte within the
// partition's 16 KiB (the current dialect's address=).
struct TilePlace {
  int64_t bank = -1;
  int64_t start_partition = 0;
  int64_t byte_offset = 0;
};

struct Placement {
  bool direct = false;           // legacy direct allocation (ncc.*.alloc / mod_alloc); false: address=
  std::vector<TilePlace> tiles;  // one per logical block, flattened row-major (one for a plain tile)
};

class AllocationTracker {
 public:
  // The kernel placed a tensor with the legacy direct-allocation APIs.
  bool direct() const { return direct_; }

  // A new tensor `t` (its blocks, buffer and shape set), created at `loc` at instruction number
  // `now`. `placement`: where the kernel put it, when it did; `check_places`: whether its places
  // are the compiler's (false in later iterations of legacy loops). Refuses the mixing rules and
  // the placement rules; registers the tensor for the checks on its accesses.
  Result<void> on_create(const ExecContext& ctx, const std::shared_ptr<NkiTensor>& t, TensorOrigin origin,
                         const Placement* placement, bool check_places, const SourceLoc& loc);
  // A result tile that became visible to the kernel after the instruction that made it (which
  // read it while it was scratch).
  void mark_result(const std::shared_ptr<NkiTensor>& t, const SourceLoc& loc);

  // An instruction is about to access `a` (writing it when `write`) at instruction number `now`.
  // `assigned`: the access is the copy of `t[...] = value`, which the compiler folds into the
  // instruction that produced value. Refuses a compiler-allocated tile read in a direct-allocation
  // kernel (located where the tile was created) and placed tiles whose bytes overlap while live.
  Result<void> on_access(const Access& a, bool write, bool assigned, int64_t now);

 private:
  struct Info;  // a placed tensor's name and location, for messages
  struct Slot {
    Buffer memory = Buffer::kSbuf;
    int64_t p0 = 0, p1 = 0, b0 = 0, b1 = 0;  // partitions [p0, p1), bytes [b0, b1)
    std::vector<int> overlaps;               // slots whose rectangles intersect this one (itself included)
    // The logical block that last used the slot, and when; and the block before it, and its last use.
    int64_t cur_tensor = -1, cur_block = -1, cur_last = -1;
    int64_t prev_block = -1, prev_last = -1;
    std::shared_ptr<const Info> cur_info, prev_info;
  };
  struct Placed {
    std::weak_ptr<NkiTensor> tensor;
    int64_t id = 0;
    int nblocks = 1;
    int64_t block_elems = 0;     // elements of one logical block in the tensor's storage
    std::vector<int> slot;       // per block
    std::vector<int64_t> first;  // per block: first access of its live span, -1 before
    std::shared_ptr<const Info> info;
    // The block whose live span an SBUF write restarted at instruction reset_at (what it held had
    // been overwritten), and the conflict to report if that instruction also reads it.
    int64_t reset_block = -1, reset_at = -1;
    Diagnostic reset_conflict;
  };
  struct Implicit {
    std::weak_ptr<NkiTensor> tensor;
    SourceLoc loc;
  };

  int slot_of(Buffer memory, int64_t p0, int64_t p1, int64_t b0, int64_t b1);
  void sweep();
  Result<void> check_places(const ExecContext& ctx, const NkiTensor& t, const Placement& p, int64_t partitions,
                            int64_t tile_bytes) const;

  bool direct_ = false;
  SourceLoc first_direct_loc_;
  std::optional<std::pair<SourceLoc, std::string>> first_auto_;  // the first compiler-allocated on-chip tensor
  std::optional<std::pair<SourceLoc, std::string>> first_hbm_;   // the first private HBM tensor
  std::unordered_map<const NkiTensor*, Placed> placed_;
  std::unordered_map<const NkiTensor*, Implicit> implicit_;
  size_t sweep_at_ = 1024;
  int64_t next_id_ = 0;
  std::vector<Slot> slots_;
  std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t>, int> slot_index_;
};

}  // namespace nki_agent
