// tasks/speed.h — how a verification asks for simulated time: a hook onto the cost model.
//
// Speed is measured like for like (ARCHITECTURE.md decision 8): the candidate's simulated time
// against the task's baseline kernel on the same cost model and target, and against the roofline
// bound from the task's [cost] flops and bytes. Never the simulator's wall-clock. The cost model
// fills a SpeedModel (tasks/speed_cost.h); without one a verification reports speed as not
// available, with the reason, and correctness is unaffected. measure_speed() (tasks/speed.cpp)
// runs both kernels timing-only at the task's prompt shapes and asks the model for their times.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostic.h"
#include "nki/trace.h"
#include "runtime/kernel_call.h"
#include "runtime/sandbox.h"
#include "tasks/task.h"

namespace nki_agent {

struct SpeedModel {
  // Simulated seconds of one kernel run from its trace on `target` ("trn1", "trn2").
  std::function<Result<double>(const Trace& trace, const std::string& target)> simulate;
  // The roofline bound in seconds: max(flops / peak FLOP/s, bytes / HBM bandwidth) on `target`;
  // `low_precision` says whether the task lets a kernel compute below float32 (the faster peak).
  std::function<Result<double>(double flops, double bytes, const std::string& target, bool low_precision)> roofline;

  // Simulated seconds of task baselines already measured, by task id, target and source hash: the
  // baseline of a task is timed once per SpeedModel (an agent verifies many candidates per task).
  struct BaselineTimes {
    std::mutex mu;
    std::map<std::string, double> seconds;
  };
  std::shared_ptr<BaselineTimes> baseline_times = std::make_shared<BaselineTimes>();
  // What the figures depend on besides the simulator, for the result cache (tasks/verify_cache.h):
  // "cost-model:builtin", or a hash of the hardware description given. Empty: results are not cached.
  std::string identity;

  bool available() const { return static_cast<bool>(simulate); }
};

struct SpeedResult {
  bool available = false;
  std::string reason;  // why not, when not available
  double candidate_seconds = 0;
  double baseline_seconds = 0;
  double speedup = 0;            // baseline / candidate
  double roofline_seconds = 0;   // 0 when the task gives no [cost] or the model has no roofline
  double roofline_fraction = 0;  // roofline / candidate: the share of the bound reached
  std::string target;

  nlohmann::json to_json() const;
};

class KernelService;

// A timing-only run of `files` at the task's prompt shapes on its target (zero inputs made in the
// worker, the trace collected, no outputs back): what speed and the agent's compile and profile
// tools run.
KernelCall prompt_timing_call(const Task& task, KernelFiles files);

// The speed of `candidate` on `task`: its simulated time and the task baseline's (each a timing-only
// run under `limits` in `service`; the baseline's remembered in model.baseline_times), their
// ratio, and the roofline fraction. Never fails: a speed that cannot be measured is not available,
// with the reason.
SpeedResult measure_speed(const Task& task, const KernelFiles& candidate, KernelService& service,
                          const SpeedModel& model, const SandboxLimits& limits);

}  // namespace nki_agent
