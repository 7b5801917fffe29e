// tasks/speed_cost.cpp — verify's SpeedModel over the cost model.
#include "tasks/speed_cost.h"

#include <algorithm>

#include "cost/cost.h"

namespace nki_agent {

SpeedModel cost_speed_model() {
  SpeedModel m;
  m.simulate = [](const Trace& trace, const std::string& target) -> Result<double> {
    auto hw = hardware_for_target(target);
    if (!hw) return fail(hw.error());
    auto report = profile_trace(trace, *hw);
    if (!report) return fail(report.error());
    return report->profile.total_ns * 1e-9;
  };
  m.roofline = [](double flops, double bytes, const std::string& target, bool low_precision) -> Result<double> {
    auto spec = hardware_for_target(target);
    if (!spec) return fail(spec.error());
    const HardwareSpec& hw = *spec;
    double peak = hw.pe_peak_flops_per_ns();  // dense BF16
    if (!low_precision) {
      double factor = 4;
      for (const auto& rule : hw.rules)
        if (rule.model == CostRule::Model::kMatmul) factor = rule.fp32_factor;
      peak /= factor;
    }
    double ns = 0;
    if (flops > 0 && peak > 0) ns = flops / peak;
    if (bytes > 0 && hw.hbm_bytes_per_ns > 0) ns = std::max(ns, bytes / hw.hbm_bytes_per_ns);
    return ns * 1e-9;
  };
  return m;
}

}  // namespace nki_agent
