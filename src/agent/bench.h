// agent/bench.h — the agent over a benchmark: tasks in parallel, results in SQLite, a summary per
// level (compile %, pass %, fast_p, geomean speedup, tokens, cost).
//
// With no model, each task's baseline kernel goes through the same verification pipeline (the
// "baseline" run: proof that every task is solvable and the verifier sound, and the reference for
// speedups). fast_p is the share of tasks that pass with a speedup above p over the baseline
// (fast_0 is the pass rate); the geomean speedup is over the passing tasks with a measured speed.
//
// A task whose episode was cut short by the model endpoint (a call still failing after its
// retries, past its deadline, turned away) or by SIGINT / SIGTERM is not a result: its row has
// status "interrupted", the summary counts it apart (in no share, token or cost figure), and
// `--resume` runs it again. A broken task (status "error": a task that does not load, a missing
// baseline, a harness failure) is counted apart too, never as a kernel failure. Shares are over
// the tasks with a result.
//
// Samples: with `samples` K > 1 every task runs K independent episodes, sample k with seed
// `solve.seed + k`; each is its own row, keyed by (run, task, sample), and the summary's figures
// are over episodes (the report and `export` give pass@k, report/pass_at_k.h).
// Shards: `shard_count` N > 1 runs only the tasks whose index in the task list sorted by id is
// congruent to `shard_index` modulo N (0-based), so N jobs with I = 0 .. N-1 cover every task
// once; `bench merge` (agent/bench_merge.h) joins their databases into one run.
// Kernels: each episode's best and last kernel are written to
// <out_dir>/kernels/<run>/<task>[.s<k>].best.py and .last.py, their paths on the row.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/llm.h"
#include "agent/loop.h"
#include "agent/store.h"
#include "tasks/verify.h"

namespace nki_agent {

struct BenchOptions {
  std::string tasks_root;
  std::string suite;                // a suite under tasks_root/suites (tasks/suite.h); empty: every task
  std::vector<std::string> filter;  // task ids or id prefixes ("L1_0") within those; empty: all
  std::optional<LlmConfig> model;   // none: the baseline run
  std::optional<LlmConfig> stronger;
  SolveOptions solve;
  int jobs = 1;
  int samples = 1;                       // episodes per task
  int shard_index = 0, shard_count = 1;  // this job's share of the tasks (see above)
  bool resume = false;
  std::string run_id;         // empty: made from the time (or the resumed run's)
  std::string db_path;        // the SQLite file
  std::string out_dir;        // trajectories go to out_dir/<run_id>/<task>.jsonl
  int kernel_workers = 0;     // 0: one per core, at most 8
  VerifyOptions verify;       // cache folder, timeouts; speed is filled in
  bool progress_bar = false;  // redraw one line on stderr (a terminal); else one line per task
  const std::atomic<bool>* cancel = nullptr;
  // Makes the model client for one task; empty: make_llm_client(config). Benchmarks of the
  // harness itself script a model per task through it.
  std::function<Result<std::unique_ptr<LlmClient>>(const LlmConfig& config, const Task& task)> client_factory;
};

struct LevelSummary {
  int level = 0;                                            // -1: all levels
  int tasks = 0, compiled = 0, passed = 0;                  // tasks with a result
  int interrupted = 0;                                      // tasks without one (see the file comment)
  int broken = 0;                                           // broken tasks: no result either
  double fast_0 = 0, fast_1 = 0, fast_1_5 = 0, fast_2 = 0;  // shares of tasks
  double geomean_speedup = 0;                               // over passing tasks with a speed; 0: none
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0, seconds = 0;
  nlohmann::json to_json() const;
};

struct BenchSummary {
  std::string run_id, model, db_path;
  int skipped = 0;  // tasks already finished in a resumed run
  std::vector<LevelSummary> levels;
  LevelSummary total;
  std::vector<std::string> errors;       // tasks that could not be run (a broken task, a store failure)
  std::vector<std::string> interrupted;  // "task: why" of each interrupted task
  nlohmann::json to_json() const;
  std::string format() const;
};

BenchSummary summarize_rows(const std::vector<TaskRow>& rows);

// What makes two runs the same benchmark (RunInfo::key): the model's name, the task root and the
// run's options.
std::string bench_run_key(const std::string& model_name, const std::string& tasks_root, const nlohmann::json& options);

// The file name of an episode under a run's folder: the task's label, with ".s<k>" when the run
// has several samples.
std::string episode_name(const std::string& task_label, int sample, int samples);

// Codes: nkia_task_not_found (no tasks), nkia_store_io, nkia_llm_config (checked before any task
// runs). A task's own failure is its row, never an error of the benchmark.
Result<BenchSummary> run_bench(const BenchOptions& options, const std::function<void(const std::string&)>& log);

}  // namespace nki_agent
