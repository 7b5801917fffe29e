// How fast a candidate is (tasks/speed.h): its simulated time and its task baseline's, like for like.
// This file never times anything on the wall clock: every figure comes from the SpeedModel.
#include "tasks/speed.h"

#include <optional>

#include "core/hash.h"
#include "core/log.h"
#include "runtime/kernel_service.h"
#include "tasks/baseline.h"

namespace nki_agent {

namespace {

// Simulated time of a timing-only run at the prompt's shapes.
Result<double> simulated_seconds(const Task& task, const KernelFiles& files, KernelService& service,
                                 const SpeedModel& model, const SandboxLimits& limits) {
  auto outcome = service.run(prompt_timing_call(task, files), limits);
  if (!outcome) return fail(outcome.error());
  return model.simulate(outcome->trace, task.target);
}

}  // namespace

nlohmann::json SpeedResult::to_json() const {
  nlohmann::json j = {{"available", available}};
  if (!available) {
    j["reason"] = reason;
    return j;
  }
  j["target"] = target;
  j["candidate_seconds"] = candidate_seconds;
  j["baseline_seconds"] = baseline_seconds;
  j["speedup"] = speedup;
  if (roofline_seconds > 0) {
    j["roofline_seconds"] = roofline_seconds;
    j["roofline_fraction"] = roofline_fraction;
  }
  return j;
}

KernelCall prompt_timing_call(const Task& task, KernelFiles files) {
  KernelCall call;
  call.src = std::move(files);
  call.entry = task.entry;
  call.kernel_only = true;
  call.target = task.target;
  std::vector<TensorSpec> shapes;
  for (const auto& a : task.args) shapes.push_back(TensorSpec{a.name, a.dtype, a.shape});
  make_timing_only(call, std::move(shapes));
  return call;
}

SpeedResult measure_speed(const Task& task, const KernelFiles& candidate, KernelService& service,
                          const SpeedModel& model, const SandboxLimits& limits) {
  SpeedResult s;
  s.target = task.target;
  if (!model.available()) {
    s.reason = "no cost model was given to this verification";
    return s;
  }
  NKIA_LOG_DEBUG("verify {}: speed of the candidate on {}", task.label(), task.target);
  auto cand = simulated_seconds(task, candidate, service, model, limits);
  if (!cand) {
    s.reason = "the candidate's timing run failed: " + cand.error().message;
    return s;
  }
  auto base_files = load_baseline_files(task);
  if (!base_files) {
    s.reason = "the task's baseline cannot be read: " + base_files.error().message;
    return s;
  }
  // The baseline's time: remembered per task, target and source; the candidate's own when it is
  // the baseline itself.
  const std::string key = task.id + "\n" + task.target + "\n" + sha256_hex(kernel_files_digest(*base_files));
  std::optional<double> base;
  {
    std::lock_guard<std::mutex> lock(model.baseline_times->mu);
    auto& times = model.baseline_times->seconds;
    if (auto it = times.find(key); it != times.end()) base = it->second;
  }
  if (!base) {
    Result<double> timed = *cand;
    if (kernel_files_digest(*base_files) != kernel_files_digest(candidate)) {
      NKIA_LOG_DEBUG("verify {}: speed of the baseline on {}", task.label(), task.target);
      timed = simulated_seconds(task, *base_files, service, model, limits);
    }
    if (!timed) {
      s.reason = "the baseline's timing run failed: " + timed.error().message;
      return s;
    }
    base = *timed;
    std::lock_guard<std::mutex> lock(model.baseline_times->mu);
    model.baseline_times->seconds[key] = *base;
  }
  if (*cand <= 0 || *base <= 0) {
    s.reason = "the cost model gave a zero time";
    return s;
  }
  s.available = true;
  s.candidate_seconds = *cand;
  s.baseline_seconds = *base;
  s.speedup = *base / *cand;
  if (model.roofline && (task.flops > 0 || task.bytes > 0)) {
    if (auto roof = model.roofline(task.flops, task.bytes, task.target, !task.strict_precision); roof && *roof > 0) {
      s.roofline_seconds = *roof;
      s.roofline_fraction = *roof / *cand;
    }
  }
  return s;
}

}  // namespace nki_agent
