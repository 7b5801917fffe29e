// The cost model's stages in order (cost.h), each logged at debug level with its duration.
#include "cost/cost.h"

#include "core/clock.h"
#include "core/log.h"

namespace nki_agent {

Result<CostReport> profile_trace(const Trace& trace, const HardwareSpec& hw, const ScheduleOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  auto prog = lower_trace(trace, hw);
  if (!prog) return fail(prog.error());
  NKIA_LOG_DEBUG("cost model: lowered {} trace records for {} in {:.3f} s", trace.size(), hw.target.name,
                 seconds_since(t0));
  CostReport r;
  r.program = std::move(*prog);
  t0 = std::chrono::steady_clock::now();
  r.deps = analyze_dependences(r.program, hw);
  NKIA_LOG_DEBUG("cost model: dependences in {:.3f} s", seconds_since(t0));
  t0 = std::chrono::steady_clock::now();
  r.schedule = schedule_program(r.program, r.deps, hw, options);
  NKIA_LOG_DEBUG("cost model: scheduled in {:.3f} s", seconds_since(t0));
  t0 = std::chrono::steady_clock::now();
  r.profile = build_profile(trace, r.program, r.deps, r.schedule, hw);
  NKIA_LOG_DEBUG("cost model: profile in {:.3f} s, {:.0f} ns simulated", seconds_since(t0), r.profile.total_ns);
  return r;
}

}  // namespace nki_agent
