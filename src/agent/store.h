// agent/store.h — benchmark results in SQLite: one row per run, one per (run, task).
//
// A task's row is written in one transaction when the task finishes, so a killed benchmark loses
// only the tasks in flight; `bench --resume` finds the run by its key (model, task root, options)
// and runs only the tasks without a result: those without a row, and those whose row has status
// "interrupted" (an episode the model endpoint or a stop cut short; agent/bench.h), whose row the
// new one replaces. The database is WAL-journalled: several benchmarks may
// share one file.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
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

struct TaskRow {
  std::string run_id, task_id, task, category, status, error, kernel, trajectory;
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
  ~ResultStore();

  Result<void> add_run(const RunInfo& run);
  // The most recent run with this key, if any.
  Result<std::optional<RunInfo>> find_run(const std::string& key);
  // Every run, the most recent first.
  Result<std::vector<RunInfo>> runs();
  Result<void> add_result(const TaskRow& row);  // replaces an earlier row of the same (run, task)
  // The tasks of the run with a result (an "interrupted" row is none).
  Result<std::set<std::string>> finished_tasks(const std::string& run_id);
  Result<std::vector<TaskRow>> results(const std::string& run_id);

 private:
  explicit ResultStore(std::unique_ptr<SQLite::Database> db);
  std::unique_ptr<SQLite::Database> db_;
  std::mutex mu_;
};

}  // namespace nki_agent
