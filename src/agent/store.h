// agent/store.h — benchmark results in SQLite: one row per run, one per (run, task, sample).
//
// An episode's row is written in one transaction when it finishes, so a killed benchmark loses
// only the episodes in flight; `bench --resume` finds the run by its key (model, task root, options)
// and runs only the episodes without a result: those without a row, and those whose row has status
// "interrupted" (an episode the model endpoint or a stop cut short; agent/bench.h), whose row the
// new one replaces. The database is WAL-journalled: several benchmarks may share one file.
//
// Every row says why it ended (`outcome`, see kOutcome* below), with the failing check and the
// Diagnostic code, the model's and the tools' seconds, the roofline share, and the paths of the
// best and the last kernel written beside the database (agent/bench.h). A database of an older
// schema (rows keyed by (run, task), without these columns) is migrated when it is opened: its rows
// become sample 0 with an empty outcome, which readers derive from the old status.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"

namespace SQLite {
class Database;
}

namespace nki_agent {

struct RunInfo {
  std::string run_id;
  std::string key;  // what makes two runs the same benchmark: model, task root, options
  std::string model;
  std::string tasks_root;
  nlohmann::json options;
  std::string created;  // ISO 8601 UTC
};

// Why an episode ended: the row's `outcome`. Interrupted, endpoint failure and broken are not
// results of the task (counted apart; --resume runs the first two again).
inline constexpr const char* kOutcomePassed = "passed";
inline constexpr const char* kOutcomeFailedCheck = "failed_check";          // a kernel ran; a check failed
inline constexpr const char* kOutcomeCompileError = "compile_error";        // the last kernel did not compile
inline constexpr const char* kOutcomeBudgetExhausted = "budget_exhausted";  // the turns ran out, no kernel tried
inline constexpr const char* kOutcomeRefused = "refused";
inline constexpr const char* kOutcomeEndpointFailure = "endpoint_failure";  // a model call failed for good
inline constexpr const char* kOutcomeInterrupted = "interrupted";           // SIGINT / SIGTERM
inline constexpr const char* kOutcomeBroken = "broken";                     // the task or the harness failed

struct TaskRow {
  std::string run_id, task_id, task, category, status, error, kernel, trajectory;
  int sample = 0;       // 0 .. K-1 under bench --samples K
  uint64_t seed = 0;    // the episode's seed (distinct per sample)
  std::string outcome;  // kOutcome*; empty in rows of older databases
  std::string check;    // the failing check (tasks/verify_check.h); empty when passed or none ran
  std::string code;     // the failure's Diagnostic code
  double model_seconds = 0, tool_seconds = 0;
  double roofline = -1;                            // the best passing kernel's roofline share; -1: not measured
  std::string best_kernel_path, last_kernel_path;  // files beside the database; empty: none written
  int level = 0;
  bool compiled = false, passed = false;
  double speedup = 0;
  int turns = 0, tool_calls = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0, seconds = 0;
  nlohmann::json result;  // the SolveResult's JSON
};

// One connection, shared by the bench's worker threads: every method takes the store's lock, so
// that their transactions never nest.
class ResultStore {
 public:
  // Opens (creating) the database. Code nkia_store_io.
  static Result<std::unique_ptr<ResultStore>> open(const std::string& path);
  // Opens a results database a bench run wrote, refusing a path that is not a file (code
  // nkia_bad_argument) instead of creating an empty database there; else as open().
  static Result<std::unique_ptr<ResultStore>> open_existing(const std::string& path);
  ~ResultStore();

  Result<void> add_run(const RunInfo& run);
  // The most recent run with this key, if any.
  Result<std::optional<RunInfo>> find_run(const std::string& key);
  // Every run, the most recent first.
  Result<std::vector<RunInfo>> runs();
  Result<void> add_result(const TaskRow& row);  // replaces an earlier row of the same (run, task, sample)
  // The tasks of the run with a result in some sample (an "interrupted" row is none).
  Result<std::set<std::string>> finished_tasks(const std::string& run_id);
  // The (task, sample) episodes of the run with a result.
  Result<std::set<std::pair<std::string, int>>> finished_episodes(const std::string& run_id);
  // By task id, then sample.
  Result<std::vector<TaskRow>> results(const std::string& run_id);

 private:
  explicit ResultStore(std::unique_ptr<SQLite::Database> db);
  std::unique_ptr<SQLite::Database> db_;
  std::mutex mu_;
};

}  // namespace nki_agent
