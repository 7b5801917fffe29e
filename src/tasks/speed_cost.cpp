// tasks/speed_cost.cpp — verify's SpeedModel over the cost model.
#include "tasks/speed_cost.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "cost/cost.h"

namespace nki_agent {

namespace {

// A target's description, parsed on first use (or the one description given for every target).
class Descriptions {
 public:
  Descriptions() = default;
  explicit Descriptions(HardwareSpec fixed) : fixed_(std::move(fixed)) {}

  Result<const HardwareSpec*> get(const std::string& target) {
    if (fixed_) return &*fixed_;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = parsed_.find(target);
    if (it == parsed_.end()) {
      auto hw = hardware_for_target(target);
      if (!hw) return fail(hw.error());
      it = parsed_.emplace(target, std::move(*hw)).first;
    }
    return &it->second;
  }

 private:
  std::optional<HardwareSpec> fixed_;
  std::mutex mu_;
  std::map<std::string, HardwareSpec> parsed_;
};

SpeedModel model_over(std::shared_ptr<Descriptions> d) {
  SpeedModel m;
  m.simulate = [d](const Trace& trace, const std::string& target) -> Result<double> {
    auto hw = d->get(target);
    if (!hw) return fail(hw.error());
    auto report = profile_trace(trace, **hw);
    if (!report) return fail(report.error());
    return report->profile.total_ns * 1e-9;
  };
  m.roofline = [d](double flops, double bytes, const std::string& target, bool low_precision) -> Result<double> {
    auto spec = d->get(target);
    if (!spec) return fail(spec.error());
    const HardwareSpec& hw = **spec;
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

}  // namespace

SpeedModel cost_speed_model() {
  SpeedModel m = model_over(std::make_shared<Descriptions>());
  m.identity = "cost-model:builtin";  // the targets' descriptions are compiled in
  return m;
}

SpeedModel cost_speed_model(HardwareSpec hw) {
  return model_over(std::make_shared<Descriptions>(std::move(hw)));
}

}  // namespace nki_agent
