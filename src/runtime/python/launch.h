// runtime/python/launch.h — the kernel launch running on this thread: its SPMD position and the
// instruction core's execution context (target, trace).
#pragma once

#include <vector>

#include "nki/isa.h"

namespace nki_agent {

struct LaunchContext {
  std::vector<int64_t> grid;        // empty: a plain call (one instance)
  std::vector<int64_t> program_id;  // this instance's position in the grid
  ExecContext exec;
};

// The launch being executed on this thread, or null outside a kernel.
LaunchContext* current_launch();

}  // namespace nki_agent
