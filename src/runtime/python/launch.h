// runtime/python/launch.h — the kernel launch running on this thread: its SPMD position and the
// instruction core's execution context (target, compute mode, trace); and the run (one
// python_run) that the launches belong to.
#pragma once

#include <optional>
#include <vector>

#include "nki/checks.h"
#include "nki/isa.h"
#include "nki/placement.h"

namespace nki_agent {

struct LaunchContext {
  std::vector<int64_t> grid;        // empty: a plain call (one instance)
  std::vector<int64_t> program_id;  // this instance's position in the grid
  ExecContext exec;
  // shared_hbm tensors are shared by the SPMD instances: the k-th one an instance allocates is the
  // k-th one the first instance allocated (the kernel's outputs, which every instance writes to).
  std::vector<std::shared_ptr<NkiTensor>> shared_hbm;
  size_t shared_next = 0;  // the next index into shared_hbm for the running instance
  // The loops (nl.affine_range, nl.sequential_range) running, outermost first; a tensor created in
  // an iteration belongs to it (NkiTensor::scope) and is out of scope once it ends.
  struct Loop {
    int64_t id = 0;
    bool affine = false;
    bool scoped = false;     // legacy dialect: tensors created in an iteration belong to it
    int64_t iteration = -1;  // -1 before the first
    int64_t scope = 0;       // the running iteration's scope id
  };
  std::vector<Loop> loops;
  // The PSUM tensors the running instance allocated, with the spans they are live over; checked
  // against PSUM's capacity when the instance returns (check_psum_capacity).
  std::vector<std::shared_ptr<LiveRange>> psum_ranges;
  // Likewise the auto-allocated SBUF tiles, whose peak over all instances is one warning for the
  // launch (nkia_sbuf_capacity_exceeded); the list is pruned when it reaches sbuf_prune_at.
  std::vector<std::shared_ptr<LiveRange>> sbuf_ranges;
  size_t sbuf_prune_at = 4096;
  SbufUse sbuf;
  // Tensors the kernel places itself (direct allocation, address=) and the rules of
  // direct-allocation kernels (nki/placement.h).
  AllocationTracker alloc;
  // The instruction number the next instruction gets: its position in the launch's trace.
  int64_t instruction_clock() const { return static_cast<int64_t>(exec.trace.size()) + exec.trace.dropped(); }
  int64_t next_id = 1;  // loop and scope ids, unique within the launch
  // The scope a tensor created now belongs to: the innermost scoped loop's running iteration.
  int64_t current_scope() const {
    for (size_t i = loops.size(); i-- > 0;)
      if (loops[i].scoped) return loops[i].scope;
    return 0;
  }
  // Whether a placement made now is the compiler's: not in a later iteration of a legacy (scoped)
  // loop, whose body the tracer sees once.
  bool first_iterations() const {
    for (const Loop& l : loops)
      if (l.scoped && l.iteration > 0) return false;
    return true;
  }
  bool scope_open(int64_t scope) const {
    if (scope == 0) return true;
    for (const Loop& l : loops)
      if (l.scope == scope) return true;
    return false;
  }
};

// The launch being executed on this thread, or null outside a kernel.
LaunchContext* current_launch();

// What the run in progress on this thread asks of its launches. A host function may launch
// several kernels: each takes the run's target and compute mode when it begins, and hands its
// trace to the run's when it ends, so the run's trace holds every instruction in launch order.
struct RunScope {
  const TargetSpec* target = &target_trn1();
  bool compute = true;        // false: timing-only (ExecContext::compute)
  bool collect_trace = true;  // false: launches' traces are dropped
  bool eager_state = false;   // ExecContext::eager_state
  // The run's entry is a kernel: Python may read no tensor's values for the rest of the run, in a
  // launch or not (nkia_trace_time_value_read); its outputs leave as HBM tensors.
  bool values_sealed = false;
  // A failure that ends the run whatever the kernel does with its exception (a Diagnostic whose
  // message depends on tensor values); python_run reports it.
  std::optional<Diagnostic> fatal;
  Trace trace;
  WarningList warnings;  // every launch's warnings, handed over when it ends
};

// The run on this thread (python_run sets it), or null: launches then keep ExecContext's defaults.
RunScope* current_run();
// Called by the launch itself, around its instances (py_module.cpp).
void begin_launch(LaunchContext& launch);
void end_launch(LaunchContext& launch) noexcept;

}  // namespace nki_agent
