// cost/perfetto.h — a schedule as a Chrome trace-event JSON file, which ui.perfetto.dev (and
// chrome://tracing) open: one track per compute engine, per DMA queue (as many lanes as it has
// DMAs in flight at once) and per DMA engine; every slice named by its opcode with its source
// line, bytes and flops.
#pragma once

#include <string>

#include "core/diagnostic.h"
#include "cost/schedule.h"

namespace nki_agent {

struct PerfettoOptions {
  std::string title;                      // the process name shown ("matmul.py:matmul_kernel on trn1")
  size_t max_dma_engine_slices = 300000;  // beyond this, DMA engine tracks show merged busy periods
};

// The whole trace document.
std::string perfetto_trace(const Trace& trace, const CostProgram& prog, const Schedule& sched, const HardwareSpec& hw,
                           const PerfettoOptions& options);
// Written to `path`. Code nkia_unwritable.
Result<void> write_perfetto_trace(const std::string& path, const Trace& trace, const CostProgram& prog,
                                  const Schedule& sched, const HardwareSpec& hw, const PerfettoOptions& options);

}  // namespace nki_agent
