// cost/cost.h — the cost model in one call: a trace and a hardware description in, the lowered
// program, its dependencies, its schedule and its profile out. The stages are in lower.h, deps.h,
// schedule.h and profile.h; perfetto.h draws the schedule. docs/cost-model.md explains the model.
#pragma once

#include "cost/deps.h"
#include "cost/hardware.h"
#include "cost/lower.h"
#include "cost/profile.h"
#include "cost/schedule.h"

namespace nki_agent {

struct CostReport {
  CostProgram program;
  DependenceGraph deps;
  Schedule schedule;
  Profile profile;
};

// Code nkia_profile_empty when the trace has no instruction to cost.
Result<CostReport> profile_trace(const Trace& trace, const HardwareSpec& hw, const ScheduleOptions& options = {});

}  // namespace nki_agent
