// The cost model's stages in order (cost.h).
#include "cost/cost.h"

namespace nki_agent {

Result<CostReport> profile_trace(const Trace& trace, const HardwareSpec& hw, const ScheduleOptions& options) {
  auto prog = lower_trace(trace, hw);
  if (!prog) return fail(prog.error());
  CostReport r;
  r.program = std::move(*prog);
  r.deps = analyze_dependences(r.program, hw);
  r.schedule = schedule_program(r.program, r.deps, hw, options);
  r.profile = build_profile(trace, r.program, r.deps, r.schedule, hw);
  return r;
}

}  // namespace nki_agent
