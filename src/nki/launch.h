// nki/launch.h — one kernel launch: its SPMD instances, the tensors it creates and their rules, the
// loops running (nl.affine_range / nl.sequential_range) with their scopes and iteration tags, the
// live spans of its PSUM and SBUF tiles against their capacities, and the rules every operand of
// an instruction obeys. The front end (the Python kernel host) converts its objects into these
// types, calls in here and raises the Diagnostics; every launch rule lives in this file, once.
//
// A launch runs its kernel once per SPMD instance, serially (as on one NeuronCore):
//   begin_instance(i) → the kernel's calls → end_instance() (PSUM capacity) → … → finish()
// finish() adds the launch's SBUF warning. Tensors created in a scoped loop iteration belong to it
// and are refused once it has ended; shared_hbm tensors are the kernel's outputs, the same ones in
// every instance.
//
// It never calls into Python, never walks frames for a location (a rule that names a place takes
// a SourceLoc), and never computes an instruction (nki/isa.h does).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nki/checks.h"
#include "nki/isa.h"
#include "nki/isa_matmul_modes.h"
#include "nki/placement.h"

namespace nki_agent {

// What the kernel asks for when it creates a tensor (nl.ndarray, nl.zeros, a result tile).
struct TensorRequest {
  Shape shape;
  DType dtype = DType::kFloat32;
  Buffer buffer = Buffer::kSbuf;
  std::string name;
  int blocks = 0;              // leading block dimensions before the partition axis (legacy nl.par_dim)
  bool auto_allocated = true;  // the compiler allocates it (counted against PSUM / SBUF capacity)
  TensorOrigin origin = TensorOrigin::kExplicit;
  std::optional<Placement> placement;  // where the kernel placed it, when it did (nki/placement.h)
};

// The shape rules of a new tensor in `buffer`: no negative dimension (nkia_bad_shape); on chip, a
// partition and a free dimension after `blocks` (nkia_insufficient_rank) and at most pmax partitions
// (err_num_partition_exceed_arch_limit).
Result<void> check_tensor_shape(const ExecContext& ctx, const Shape& shape, Buffer buffer, int blocks);

// err_nki_api_outside_of_nki_kernel: `api` was called with no launch running.
Diagnostic outside_kernel_error(std::string_view api);

// err_cannot_update_immutable_parameter when `role` writes (dst, dst_idx, reduce_res) an input the
// kernel may not update.
Result<void> check_writable(const Access& a, std::string_view role);
// Whether an operand in `role` is written by its instruction.
bool role_writes(std::string_view role);

// When a tensor the kernel creates gets its poison (nki/nki_tensor.h). Timing-only runs compute
// nothing and return no values: fresh on-chip tiles stay unfilled and HBM tensors read as zeros
// (fresh memory, never written: an 800 MB output costs no page until something touches it);
// eager-state runs poison at once; others lazily.
Poison fresh_poison(const ExecContext& ctx, Buffer b);

// The warning for a returned output with elements that hold no data (nki/written.h):
// nkia_uninitialized_read where garbage first entered its values, when an instruction combined
// unwritten elements with written ones on the way; else nkia_output_partially_written at
// `returned_at`, the kernel's return. Nothing when every element holds data.
std::optional<Diagnostic> unwritten_output_warning(const std::shared_ptr<NkiTensor>& t, const SourceLoc& returned_at);

class Launch {
 public:
  // The SPMD grid; empty: a plain call (one instance).
  explicit Launch(std::vector<int64_t> grid = {});

  std::vector<int64_t> grid;
  std::vector<int64_t> program_id;  // the running instance's position in the grid
  ExecContext exec;
  // Tensors the kernel places itself (direct allocation, address=) and the rules of
  // direct-allocation kernels (nki/placement.h).
  AllocationTracker alloc;

  // ---- SPMD instances ----
  int64_t instances() const;  // the product of the grid
  // Instance `i` (row-major in the grid) begins: its program_id, and a fresh count of the outputs
  // it allocates and of its PSUM and SBUF spans.
  void begin_instance(int64_t i);
  // The instance returned: nkia_psum_capacity_exceeded if its PSUM tiles did not fit; its SBUF peak
  // is noted for the launch.
  Result<void> end_instance();
  // Every instance returned: the launch's nkia_sbuf_capacity_exceeded warning, if any, joins
  // exec.warnings.
  void finish();

  // ---- two logical cores (LNC=2) ----
  // What belongs to the running instance alone: its grid position, the outputs it has taken, its
  // loops and affine iteration, its PSUM and SBUF spans and placements, the Vector engine's
  // accumulator. The two
  // instances of an LNC=2 launch run one at a time and hand over only where the kernel synchronises
  // them (nisa.sendrecv, nisa.core_barrier): park() takes the running one's state out, resume()
  // puts a parked one back, begin_instance() starts the other one afresh.
  // A running nl.affine_range / nl.sequential_range loop.
  struct Loop {
    int64_t id = 0;
    bool affine = false;
    bool scoped = false;     // legacy dialect: tensors created in an iteration belong to it
    int64_t iteration = -1;  // -1 before the first
    int64_t scope = 0;       // the running iteration's scope id
  };

  struct InstanceState {
    int64_t rank = 0;
    std::vector<int64_t> program_id;
    size_t shared_next = 0;
    std::vector<Loop> loops;
    int64_t affine_tag = 0;
    std::vector<ExecContext::CarriedRead> carried_reads;
    std::vector<float> vector_accumulator;
    std::vector<std::shared_ptr<LiveRange>> psum_ranges, sbuf_ranges;
    size_t sbuf_prune_at = 0;
    AllocationTracker alloc;  // each physical core has its own SBUF and PSUM to place tiles in
  };
  InstanceState park();
  void resume(InstanceState s);

  // ---- ranks of a replica group (nki.collectives) ----
  // A collective over ranks the launch does not run yet grows it: every rank runs the kernel (its
  // one instance, or the two cores of LNC=2) with shared_hbm tensors, a trace and random state of its
  // own. Rank 0's trace is the launch's: a profile is one rank's, as a device measures it on one
  // NeuronCore; the other ranks' traces are dropped with the launch. begin_instance(i, rank) starts
  // instance i of `rank`; resume() returns to the parked instance's rank; switch_rank(0) makes rank
  // 0's trace the launch's again (done before the launch hands its trace to the run).
  void begin_instance(int64_t i, int64_t rank);
  int64_t rank() const { return rank_; }
  void switch_rank(int64_t rank);

  // ---- tensors ----
  // A new tensor with its rules (check_tensor_shape; err_shared_hbm_must_in_kernel_level for a
  // shared_hbm tensor inside a scoped loop; nkia_bad_shape when an SPMD instance allocates other
  // outputs than the first did, whose tensor a later instance gets back), tracked for capacity and
  // registered with the allocation tracker. `loc`: where the kernel created it.
  Result<std::shared_ptr<NkiTensor>> new_tensor(const TensorRequest& r, const SourceLoc& loc);
  // The float32 PSUM result tile of a matmul whose operands passed their checks, accessed now:
  // [stationary's free size, moving's free size] (axis 2 of each in the double-row mode, whose
  // operands are [P, 2, F]).
  Result<std::shared_ptr<NkiTensor>> new_matmul_result(const Access& stationary, const Access& moving,
                                                       MatmulPerfMode mode, const SourceLoc& loc);
  // A scratch tile an instruction's emulation read became the result the kernel sees.
  void mark_result(const std::shared_ptr<NkiTensor>& t, const SourceLoc& loc);

  // ---- operands ----
  // An instruction takes `a` as its operand `role` ("dst", "data", ...): it must be in scope (not a
  // tensor of a loop iteration that has ended: err_local_variable_used_out_of_scope) and writable
  // (check_writable); it is live at least until now, and the direct-allocation rules of the access
  // hold (role "value": the source of `t[...] = value`, folded into the instruction that made it).
  Result<void> admit(const Access& a, std::string_view role);

  // ---- loops ----
  // nl.affine_range / nl.sequential_range: loop_begin once (its id), loop_next before each
  // iteration, loop_done after the last one when the loop ran to its end, loop_end when it is left
  // (with any inner loop a break or an exception left open). Affine loops tag writes with their
  // iteration (ExecContext::affine_tag) and check at each iteration's end that it read nothing
  // another iteration wrote (nkia_affine_range_carried_dependency); scoped loops (the legacy dialect,
  // whose tracer gives loop bodies block scope) own the tensors their iterations create.
  int64_t loop_begin(bool affine, bool scoped);
  Result<void> loop_next(int64_t id);
  Result<void> loop_done(int64_t id);
  void loop_end(int64_t id);

  // The scope a tensor created now belongs to: the innermost scoped loop's running iteration; 0
  // at the kernel's top level.
  int64_t current_scope() const;
  // Whether a placement made now is the compiler's: not in a later iteration of a legacy (scoped)
  // loop, whose body the tracer sees once.
  bool first_iterations() const;
  bool scope_open(int64_t scope) const;
  // The instruction number the next instruction gets: its position in the launch's trace.
  int64_t instruction_clock() const { return exec.trace.issued(); }

  // Live spans tracked so far in the running instance (for tests and the capacity checks).
  const std::vector<std::shared_ptr<LiveRange>>& psum_ranges() const { return psum_ranges_; }
  const std::vector<std::shared_ptr<LiveRange>>& sbuf_ranges() const { return sbuf_ranges_; }
  const SbufUse& sbuf_use() const { return sbuf_; }

 private:
  Result<void> track_psum(NkiTensor& t, int64_t partitions, const SourceLoc& loc);
  void track_sbuf(NkiTensor& t, int64_t partitions, const SourceLoc& loc);
  void refresh_affine_tag();
  Result<void> end_iteration(const Loop& l);

  // shared_hbm tensors are shared by the SPMD instances: the k-th one an instance allocates is the
  // k-th one the first instance allocated (the kernel's outputs, which every instance writes to).
  std::vector<std::shared_ptr<NkiTensor>> shared_hbm_;
  size_t shared_next_ = 0;  // the next index into shared_hbm_ for the running instance
  // The rank running, and what each other rank keeps while it is not (see switch_rank).
  struct RankState {
    std::vector<std::shared_ptr<NkiTensor>> shared_hbm;
    Trace trace;
    Rng rng{0};
  };
  int64_t rank_ = 0;
  std::map<int64_t, RankState> parked_ranks_;
  std::vector<Loop> loops_;  // the loops running, outermost first
  // The PSUM tensors the running instance allocated, with the spans they are live over; checked
  // against PSUM's capacity when the instance returns (check_psum_capacity).
  std::vector<std::shared_ptr<LiveRange>> psum_ranges_;
  // Likewise the auto-allocated SBUF tiles, whose peak over all instances is one warning for the
  // launch (nkia_sbuf_capacity_exceeded); the list is pruned when it reaches sbuf_prune_at_.
  std::vector<std::shared_ptr<LiveRange>> sbuf_ranges_;
  size_t sbuf_prune_at_ = kPruneAt;
  SbufUse sbuf_;
  int64_t next_id_ = 1;  // loop and scope ids, unique within the launch

  static constexpr size_t kPruneAt = 4096;  // spans kept before the lists are checked and pruned
};

}  // namespace nki_agent
