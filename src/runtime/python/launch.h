// runtime/python/launch.h — the kernel launch running on this thread (a Launch of nki/launch.h,
// which holds its rules), and the run (one python_run) that the launches belong to: what the run
// asks of them and what it collects from them. Nothing here is an NKI rule.
#pragma once

#include <optional>
#include <vector>

#include "nki/launch.h"

namespace nki_agent {

class Recording;  // runtime/python/replay.h

// The launch being executed on this thread, or null outside a kernel.
Launch* current_launch();

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
  // Where the run is recorded for replays (runtime/python/replay.h), or null.
  Recording* recording = nullptr;
};

// The run on this thread (python_run sets it), or null: launches then keep ExecContext's defaults.
RunScope* current_run();
// Called by the launch itself, around its instances (py_core.cpp).
void begin_launch(Launch& launch);
void end_launch(Launch& launch) noexcept;

}  // namespace nki_agent
