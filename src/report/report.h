// report/report.h — the HTML report's model: a benchmark run's rows classified and aggregated.
//
// Each stored row gets one outcome, the row's stored `outcome` (agent/store.h) when it has one:
//   passed            the kernel passed verification;
//   failed_check      it compiled (ran) but a check failed: the check's name is its failure kind;
//   compile_error     the last kernel did not compile: the Diagnostic's code is its failure kind;
//   budget_exhausted  the turns ran out before the model wrote a kernel;
//   refused           the model refused the task;
//   endpoint_failure  a model call failed for good (the endpoint): not a result;
//   interrupted       the episode was stopped (SIGINT, SIGTERM): not a result;
//   broken            the task or the infrastructure failed (status "error": a task that does not
//                     load, a baseline that is missing, a sandbox that could not start): not a result.
// Rows of older databases, without a stored outcome, are classified from their status and their
// compiled / passed flags (an endpoint failure then reads as interrupted).
// Endpoint failures, interrupted and broken tasks are counted apart: they are in no share, in no
// denominator, and never a kernel failure. Shares are over the tasks with a result ("tasks"
// below); under `bench --samples K` every episode is a row, so shares are over episodes and the
// pass@k table (report/pass_at_k.h) is the per-task view.
//
// fast_p (KernelBench's definition, ../shared/docs/RL-CONVENTIONS.md §4.1) is the share of tasks
// that are correct AND have a speedup strictly above p, every task with a result in the
// denominator; fast_0 is the pass rate when every passing kernel was timed. The geomean speedup is
// over the correct tasks with a measured speedup. Nothing here renders: see report/html.h.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/store.h"
#include "core/diagnostic.h"
#include "report/pass_at_k.h"
#include "report/trajectory_view.h"

namespace nki_agent {

enum class Outcome {
  kPassed,
  kFailedCheck,
  kCompileError,
  kBudgetExhausted,
  kRefused,
  kEndpointFailure,
  kInterrupted,
  kBroken
};
inline constexpr int kNumOutcomes = static_cast<int>(Outcome::kBroken) + 1;

// "passed", "failed_check", "compile_error", "budget_exhausted", "refused", "endpoint_failure",
// "interrupted", "broken" (the names stored in a row's outcome).
std::string_view outcome_name(Outcome o);
// Whether the outcome is a result of the task (not an endpoint failure, interrupted or broken).
bool is_result(Outcome o);
// The outcome of a stored row (see the file comment). Rows of older runs, whose statuses were
// other words, fall back on their compiled and passed flags.
Outcome outcome_of(const TaskRow& row);

// KernelBench's thresholds.
inline constexpr std::array<double, 6> kFastThresholds = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};

// One task of one run, as the report shows it.
struct TaskView {
  TaskRow row;
  Outcome outcome = Outcome::kCompileError;
  std::string check;         // the failed check (empty when passed or none ran)
  std::string code;          // the failure's Diagnostic code (stored, else the trajectory's last)
  std::string failure_kind;  // what the failure-kinds chart counts; empty for a pass or a non-result
  int first_pass_turn = 0;   // 0: never passed, or a run without turns (the baseline run)
  double candidate_ms = -1, baseline_ms = -1, roofline_fraction = -1;  // -1: not measured
  double model_seconds = 0, tool_seconds = 0;
  TrajectoryView trajectory;  // read from the row's trajectory file when it is there
};

// The figures of a group of tasks (all, one level, one category).
struct GroupSummary {
  std::string name;  // "all", "L1", "elementwise"
  int tasks = 0;     // with a result
  int compiled = 0, passed = 0, refused = 0;
  int broken = 0, interrupted = 0;                    // counted apart
  std::array<double, kFastThresholds.size()> fast{};  // fast_p for each threshold, shares of tasks
  double geomean_speedup = 0;                         // over correct tasks with a speedup; 0: none
  int timed = 0;                                      // correct tasks with a speedup
  int64_t input_tokens = 0, output_tokens = 0;
  double cost_usd = 0, seconds = 0;
  bool cost_stored = false;  // some row of the group carried a cost

  double compile_share() const { return tasks > 0 ? static_cast<double>(compiled) / tasks : 0; }
  double pass_share() const { return tasks > 0 ? static_cast<double>(passed) / tasks : 0; }
};

// The tasks summed under `name` (broken and interrupted ones counted apart).
GroupSummary summarize_group(const std::string& name, const std::vector<const TaskView*>& tasks);
// fast_p of a group at any threshold p (the curve's points).
double fast_at(const std::vector<const TaskView*>& tasks, double p);

struct RunReport {
  RunInfo run;
  std::vector<TaskView> tasks;  // by task id
  GroupSummary total;
  std::vector<GroupSummary> levels;      // by level
  std::vector<GroupSummary> categories;  // by name
  std::map<std::string, int> failure_kinds;
  int samples = 1;                 // the most samples of any task (bench --samples)
  std::vector<PassAtK> pass_at_k;  // k = 1 .. samples, all tasks and per level

  std::vector<const TaskView*> task_pointers() const;
};

// A run's rows classified and summed. `trajectories`: read each row's trajectory file.
RunReport build_run_report(const RunInfo& run, std::vector<TaskRow> rows, bool trajectories);

struct ReportOptions {
  std::vector<std::string> run_ids;  // empty: the most recent run
  bool trajectories = true;          // embed each task's trajectory (condensed) when its file is there
};

// The runs of `db_path` (in the order asked for). Codes: nkia_bad_argument (no database, no run of
// that id, no run at all), nkia_store_io.
Result<std::vector<RunReport>> load_run_reports(const std::string& db_path, const ReportOptions& options);

}  // namespace nki_agent
