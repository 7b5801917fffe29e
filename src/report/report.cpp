// report/report.cpp — rows to outcomes, groups and their figures; the runs read from the database.
#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "agent/loop.h"

namespace nki_agent {

namespace {

using nlohmann::json;

json member(const json& obj, const char* key) {
  if (!obj.is_object()) return json();
  auto it = obj.find(key);
  return it == obj.end() ? json() : *it;
}

std::string string_field(const json& obj, const char* key) {
  const json v = member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

double number_field(const json& obj, const char* key, double otherwise) {
  const json v = member(obj, key);
  return v.is_number() ? v.get<double>() : otherwise;
}

// The figures of the row's stored result that have no column of their own.
// The row's own columns first; rows of older databases have them only in the stored result.
void read_result(TaskView& t) {
  const json& res = t.row.result;
  const json verify = member(res, "verify");
  t.check = !t.row.check.empty() ? t.row.check : string_field(verify, "check");
  t.code = t.row.code;
  // Bounded: the database is not trusted, and the turns chart has a bar per turn.
  t.first_pass_turn = static_cast<int>(std::clamp(number_field(res, "first_pass_turn", 0), 0.0, 1000.0));
  t.model_seconds = t.row.model_seconds > 0 ? t.row.model_seconds : number_field(res, "model_seconds", 0);
  t.tool_seconds = t.row.tool_seconds > 0 ? t.row.tool_seconds : number_field(res, "tool_seconds", 0);
  const json speed = member(verify, "speed");
  if (member(speed, "available").is_boolean() && speed["available"].get<bool>()) {
    const double c = number_field(speed, "candidate_seconds", -1), b = number_field(speed, "baseline_seconds", -1);
    t.candidate_ms = c >= 0 ? c * 1e3 : -1;
    t.baseline_ms = b >= 0 ? b * 1e3 : -1;
    t.roofline_fraction = number_field(speed, "roofline_fraction", -1);
  }
  if (t.row.roofline >= 0) t.roofline_fraction = t.row.roofline;
}

std::string failure_kind_of(const TaskView& t) {
  switch (t.outcome) {
    case Outcome::kFailedCheck: return t.check.empty() ? "failed check (not recorded)" : t.check;
    case Outcome::kCompileError: return t.code.empty() ? "no kernel compiled" : t.code;
    case Outcome::kBudgetExhausted: return "budget exhausted";
    case Outcome::kRefused: return "refused";
    default: return {};
  }
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "passed";
    case Outcome::kFailedCheck: return "failed_check";
    case Outcome::kCompileError: return "compile_error";
    case Outcome::kBudgetExhausted: return "budget_exhausted";
    case Outcome::kRefused: return "refused";
    case Outcome::kEndpointFailure: return "endpoint_failure";
    case Outcome::kInterrupted: return "interrupted";
    case Outcome::kBroken: return "broken";
  }
  return "broken";
}

bool is_result(Outcome o) {
  return o != Outcome::kInterrupted && o != Outcome::kEndpointFailure && o != Outcome::kBroken;
}

Outcome outcome_of(const TaskRow& row) {
  if (!row.outcome.empty())
    for (int i = 0; i < kNumOutcomes; ++i)
      if (outcome_name(static_cast<Outcome>(i)) == row.outcome) return static_cast<Outcome>(i);
  // A row of an older database (or an outcome this version does not know): from its status.
  if (row.status == kStatusInterrupted) return Outcome::kInterrupted;
  if (row.status == "error") return Outcome::kBroken;
  if (row.passed) return Outcome::kPassed;
  if (row.status == "refused") return Outcome::kRefused;
  return row.compiled ? Outcome::kFailedCheck : Outcome::kCompileError;
}

double fast_at(const std::vector<const TaskView*>& tasks, double p) {
  int n = 0, fast = 0;
  for (const TaskView* t : tasks) {
    if (!is_result(t->outcome)) continue;
    ++n;
    if (t->outcome == Outcome::kPassed && t->row.speedup > p) ++fast;
  }
  return n > 0 ? static_cast<double>(fast) / n : 0;
}

GroupSummary summarize_group(const std::string& name, const std::vector<const TaskView*>& tasks) {
  GroupSummary g;
  g.name = name;
  double log_sum = 0;
  for (const TaskView* t : tasks) {
    if (t->outcome == Outcome::kInterrupted || t->outcome == Outcome::kEndpointFailure) {
      ++g.interrupted;
      continue;
    }
    if (t->outcome == Outcome::kBroken) {
      ++g.broken;
      continue;
    }
    const TaskRow& r = t->row;
    ++g.tasks;
    if (r.compiled || t->outcome == Outcome::kPassed) ++g.compiled;
    if (t->outcome == Outcome::kRefused) ++g.refused;
    if (t->outcome == Outcome::kPassed) {
      ++g.passed;
      for (size_t i = 0; i < kFastThresholds.size(); ++i)
        if (r.speedup > kFastThresholds[i]) g.fast[i] += 1;
      if (r.speedup > 0) {
        ++g.timed;
        log_sum += std::log(r.speedup);
      }
    }
    g.input_tokens += r.input_tokens;
    g.output_tokens += r.output_tokens;
    g.cost_usd += r.cost_usd;
    g.seconds += r.seconds;
    if (r.cost_usd > 0) g.cost_stored = true;
  }
  if (g.tasks > 0)
    for (double& f : g.fast) f /= g.tasks;
  if (g.timed > 0) g.geomean_speedup = std::exp(log_sum / g.timed);
  return g;
}

std::vector<const TaskView*> RunReport::task_pointers() const {
  std::vector<const TaskView*> out;
  out.reserve(tasks.size());
  for (const auto& t : tasks) out.push_back(&t);
  return out;
}

RunReport build_run_report(const RunInfo& run, std::vector<TaskRow> rows, bool trajectories) {
  RunReport rep;
  rep.run = run;
  std::sort(rows.begin(), rows.end(), [](const TaskRow& a, const TaskRow& b) {
    return a.task_id != b.task_id ? a.task_id < b.task_id : a.sample < b.sample;
  });
  rep.samples = max_samples(rows);
  rep.pass_at_k = pass_at_k_table(rows);
  for (auto& r : rows) {
    TaskView t;
    t.row = std::move(r);
    t.outcome = outcome_of(t.row);
    read_result(t);
    if (trajectories) t.trajectory = read_trajectory_view(t.row.trajectory);
    t.trajectory.path = t.row.trajectory;
    // A row that stored no check (an older database) takes the last failed check, and the last
    // Diagnostic code, of its trajectory.
    if (t.outcome == Outcome::kFailedCheck && t.check.empty()) t.check = t.trajectory.last_check;
    if (t.code.empty()) t.code = t.trajectory.last_code;
    t.failure_kind = failure_kind_of(t);
    rep.tasks.push_back(std::move(t));
  }
  const auto all = rep.task_pointers();
  rep.total = summarize_group("all", all);
  std::map<int, std::vector<const TaskView*>> by_level;
  std::map<std::string, std::vector<const TaskView*>> by_category;
  for (const TaskView* t : all) {
    by_level[t->row.level].push_back(t);
    by_category[t->row.category.empty() ? "(none)" : t->row.category].push_back(t);
    if (!t->failure_kind.empty()) ++rep.failure_kinds[t->failure_kind];
  }
  for (const auto& [level, ts] : by_level) rep.levels.push_back(summarize_group(fmt::format("L{}", level), ts));
  for (const auto& [cat, ts] : by_category) rep.categories.push_back(summarize_group(cat, ts));
  return rep;
}

Result<std::vector<RunReport>> load_run_reports(const std::string& db_path, const ReportOptions& options) {
  auto store = ResultStore::open_existing(db_path);
  if (!store) return tl::unexpected(store.error());
  auto runs = (*store)->runs();
  if (!runs) return tl::unexpected(runs.error());
  if (runs->empty())
    return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("{} holds no run", db_path)));
  std::vector<std::string> ids = options.run_ids;
  if (ids.empty()) ids.push_back(runs->front().run_id);
  std::vector<RunReport> out;
  for (const auto& id : ids) {
    auto it = std::find_if(runs->begin(), runs->end(), [&](const RunInfo& r) { return r.run_id == id; });
    if (it == runs->end()) {
      std::string known;
      for (size_t i = 0; i < runs->size() && i < 10; ++i) known += (i ? ", " : "") + (*runs)[i].run_id;
      return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("{} holds no run '{}'", db_path, id),
                                              "the runs, most recent first: " + known));
    }
    auto rows = (*store)->results(id);
    if (!rows) return tl::unexpected(rows.error());
    out.push_back(build_run_report(*it, std::move(*rows), options.trajectories));
  }
  return out;
}

}  // namespace nki_agent
