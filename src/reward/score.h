// reward/score.h — the scoring core: from a model's answer to a reward, for every preset.
//
// RewardScorer::score() runs the whole pipeline once per distinct kernel: extract the kernel(s)
// (reward/extract.h), verify each against the task (tasks/verify.h: static policy, seeds x shapes x
// input distributions, the simulated speed against the task's baseline), read the components and
// flags off the verification (reward/flags.h), then score every preset requested
// (reward/presets.h). A kernel's score is cached by (kernel source, task files, options, simulator
// version), so the same request always gets the same answer and a repeat costs microseconds.
//
// The scorer resolves tasks by id under its roots only (an index of the roots' task folders, made
// on the first lookup): a client names a task, never a path.
// Failures are never exceptions: a malformed request (an unknown task or preset) is a Result error
// the caller answers 4xx; a verification that could not be done (a broken task, a missing
// reference worker) is a result with status "error", scored by no preset; a failing kernel is
// simply scored. Thread-safe: a server calls score() from many threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/tools.h"
#include "reward/result_cache.h"
#include "reward/score_types.h"
#include "runtime/kernel_service.h"
#include "tasks/task.h"
#include "tasks/verify.h"
#include "tensor/tensor_spec.h"

namespace nki_agent {

// The most kernels one request scores with "turns": "all" (each is a verification).
inline constexpr size_t kMaxTurns = 32;

struct ScorerOptions {
  std::vector<std::string> task_roots;  // empty: default_task_root()
  VerifyOptions verify;                 // timeouts, the reference cache, the speed model
  int kernel_workers = 0;               // sandboxed kernel workers; 0: one per core, at most 8
  std::string worker_path;              // the worker program; empty: KernelService's search
  size_t cache_entries = 8192;          // scored kernels kept in memory
  // Requests with their own reference (RewardRequest::inline_reference): made into tasks under
  // inline_tasks.root and verified with a confined reference; refused when false.
  bool inline_references = true;
  InlineTaskOptions inline_tasks;
};

class RewardScorer {
 public:
  // Starts the kernel workers. Codes: the worker pool's (nkia_worker_*).
  static Result<std::unique_ptr<RewardScorer>> create(ScorerOptions options);

  // Codes: nkia_task_not_found (no root holds the task, or the id is not a plain name),
  // nkia_reward_bad_request (an unknown preset, a gamma outside [0, 1], seeds outside 1..64, more
  // than kMaxTurns kernels with all_turns); with an inline reference, nkia_inline_reference (it
  // cannot be made into a task, or raised: the message says why) and nkia_serve_inline_reference
  // (inline_references is off).
  Result<RewardResult> score(const RewardRequest& request);

  // The agent's tools on a task: "compile", "verify", "profile" (agent/tools.h).
  Result<ToolResult> tool(const std::string& task_id, const std::string& name, const std::string& kernel_code);

  // compile or profile without a task: `source`'s `entry` run timing-only on zeros of `inputs`
  // (bound by position) on `target`.
  Result<ToolResult> tool_at_shapes(const std::string& name, const std::string& source, const std::string& entry,
                                    const std::vector<TensorSpec>& inputs, const std::string& target);

  // The simulated speed of the task's own baseline (candidate_seconds is the baseline's time).
  Result<SpeedResult> baseline_speed(const std::string& task_id);

  // A task by id under the roots (loaded once). Codes: nkia_task_not_found, the task's own.
  Result<std::shared_ptr<const Task>> task(const std::string& id);

  int64_t cache_hits() const { return cache_.hits(); }
  int64_t cache_misses() const { return cache_.misses(); }
  // Kernels verified: a miss that found the same kernel in flight waited for it instead.
  int64_t verifications() const { return verifications_; }
  // Kernel workers replaced after dying or hanging.
  int64_t worker_restarts() const;
  int kernel_workers() const;
  size_t tasks_loaded() const;
  // Task folders under the roots.
  size_t tasks_indexed();
  const ScorerOptions& options() const { return opt_; }

 private:
  RewardScorer(ScorerOptions options, std::unique_ptr<KernelService> service);
  // The cache, then the verifications in flight, then verify_for_reward.
  KernelScore score_kernel(const Task& task, const std::string& baseline_digest, const std::string& source,
                           const RewardRequest& request);
  // One verification, its components and flags; cached under `key` when it could be done.
  KernelScore verify_for_reward(const Task& task, const std::string& source, const RewardRequest& request,
                                const std::string& key);

  struct LoadedTask {
    std::shared_ptr<const Task> task;
    std::string baseline_digest;  // the baseline's files: the speed depends on them
  };
  Result<LoadedTask> load(const std::string& id);
  // The task of a client's reference, made once per distinct reference (and failure) and kept.
  Result<LoadedTask> load_inline(const InlineReference& ref);
  void index_tasks();
  Result<std::string> find_dir(const std::string& id);

  ScorerOptions opt_;
  std::unique_ptr<KernelService> service_;
  RewardResultCache cache_;
  std::atomic<int64_t> verifications_{0};
  std::mutex in_flight_mu_;
  std::map<std::string, std::shared_future<KernelScore>> in_flight_;  // by cache key
  mutable std::mutex mu_;
  std::map<std::string, LoadedTask> tasks_;  // by the id asked for
  // Inline tasks by inline_reference_key, and the references that could not be made into one.
  static constexpr size_t kMaxInlineTasks = 4096;
  std::map<std::string, Result<LoadedTask>> inline_tasks_;
  bool indexed_ = false;
  std::chrono::steady_clock::time_point indexed_at_;
  static constexpr double kReindexSeconds = 10;
  std::map<std::string, std::set<std::string>> index_;  // folder name, id, id_name -> folders
};

}  // namespace nki_agent
