// report/export.cpp — CSV (RFC 4180 quoting) and KernelBench's two JSON shapes.
#include "report/export.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/pass_at_k.h"
#include "report/report.h"

namespace nki_agent {

namespace {

using nlohmann::json;

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The run's verification speed record of a row ({} when none).
json speed_of(const TaskRow& r) {
  if (r.result.is_object() && r.result.contains("verify") && r.result["verify"].is_object() &&
      r.result["verify"].contains("speed"))
    return r.result["verify"]["speed"];
  return json::object();
}

double ms(const json& speed, const char* key) {
  return speed.value("available", false) && speed.contains(key) && speed[key].is_number()
             ? speed[key].get<double>() * 1e3
             : -1.0;
}

json stats(double runtime_ms, const std::string& target) {
  return {{"mean", runtime_ms},
          {"std", 0.0},
          {"min", runtime_ms},
          {"max", runtime_ms},
          {"num_trials", 1},
          {"hardware", target},
          {"device", "nki-agent simulator (simulated time)"}};
}

// The failed check: the row's own column, else (an older database) the stored verification's.
std::string check_of(const TaskRow& r) {
  if (!r.check.empty()) return r.check;
  return r.result.is_object() && r.result.contains("verify") && r.result["verify"].is_object()
             ? r.result["verify"].value("check", "")
             : "";
}

}  // namespace

Result<ExportFormat> export_format_from_name(const std::string& name) {
  if (name == "csv") return ExportFormat::kCsv;
  if (name == "kernelbench") return ExportFormat::kKernelBench;
  if (name == "kernelbench-baseline") return ExportFormat::kKernelBenchBaseline;
  if (name == "pass-at-k") return ExportFormat::kPassAtK;
  return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("no export format '{}'", name),
                                          "the formats are csv, kernelbench, kernelbench-baseline and pass-at-k"));
}

std::string export_csv(const std::vector<TaskRow>& rows) {
  std::string out =
      "run_id,task_id,task,level,category,status,compiled,passed,check,speedup,candidate_ms,baseline_ms,"
      "roofline_fraction,turns,tool_calls,input_tokens,output_tokens,cost_usd,seconds,trajectory,error,sample,seed,"
      "outcome,code,model_seconds,tool_seconds,best_kernel,last_kernel\n";
  for (const auto& r : rows) {
    const json sp = speed_of(r);
    const double cand = ms(sp, "candidate_seconds"), base = ms(sp, "baseline_seconds");
    const double roofline = r.roofline >= 0 ? r.roofline : sp.value("roofline_fraction", 0.0);
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(r.run_id), csv_field(r.task_id),
        csv_field(r.task), r.level, csv_field(r.category), csv_field(r.status), r.compiled ? 1 : 0, r.passed ? 1 : 0,
        csv_field(check_of(r)), r.speedup, cand < 0 ? std::string() : fmt::format("{}", cand),
        base < 0 ? std::string() : fmt::format("{}", base), roofline, r.turns, r.tool_calls, r.input_tokens,
        r.output_tokens, r.cost_usd, r.seconds, csv_field(r.trajectory), csv_field(r.error));
    out += fmt::format(",{},{},{},{},{},{},{},{}\n", r.sample, r.seed, csv_field(r.outcome), csv_field(r.code),
                       r.model_seconds, r.tool_seconds, csv_field(r.best_kernel_path), csv_field(r.last_kernel_path));
  }
  return out;
}

std::string export_pass_at_k(const std::vector<TaskRow>& rows) {
  std::string out = "group,k,tasks,pass_at_k\n";
  for (const auto& p : pass_at_k_table(rows))
    out += fmt::format("{},{},{},{}\n", csv_field(p.group), p.k, p.tasks, p.value);
  return out;
}

std::string export_kernelbench(const std::vector<TaskRow>& rows) {
  json out = json::object();
  for (const auto& r : rows) {
    const json sp = speed_of(r);
    const std::string target = sp.value("target", "trn1");
    // KernelBench times only a correct kernel; so does our verification.
    const double runtime = r.passed ? ms(sp, "candidate_seconds") : -1.0;
    json metadata = {{"task", r.task},         {"status", r.status}, {"level", r.level},
                     {"category", r.category}, {"hardware", target}, {"device", "nki-agent simulator"}};
    if (const std::string check = check_of(r); !check.empty() || r.result.contains("verify")) metadata["check"] = check;
    if (!r.outcome.empty()) metadata["outcome"] = r.outcome;
    if (!r.code.empty()) metadata["code"] = r.code;
    if (!r.error.empty()) metadata["error"] = r.error;
    if (r.passed && r.speedup > 10) metadata["excessive_speedup"] = true;
    if (!out.contains(r.task_id)) out[r.task_id] = json::array();
    out[r.task_id].push_back({{"sample_id", r.sample},
                              {"compiled", r.compiled},
                              {"correctness", r.passed},
                              {"metadata", metadata},
                              {"runtime", runtime},
                              {"runtime_stats", runtime < 0 ? json::object() : stats(runtime, target)}});
  }
  return out.dump(2);
}

std::string export_kernelbench_baseline(const std::vector<TaskRow>& rows) {
  json out = json::object();
  for (const auto& r : rows) {
    const json sp = speed_of(r);
    const double base = ms(sp, "baseline_seconds");
    if (base < 0) continue;  // not timed: KernelBench's file has no entry for it either
    out[fmt::format("level{}", r.level)][r.task + ".py"] = stats(base, sp.value("target", "trn1"));
  }
  return out.dump(2);
}

Result<std::string> export_run(const std::string& db_path, const std::string& run_id, ExportFormat format) {
  auto store = ResultStore::open_existing(db_path);
  if (!store) return tl::unexpected(store.error());
  std::string id = run_id;
  if (id.empty()) {
    auto runs = (*store)->runs();
    if (!runs) return tl::unexpected(runs.error());
    if (runs->empty())
      return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("{} holds no run", db_path)));
    id = runs->front().run_id;
  }
  auto rows = (*store)->results(id);
  if (!rows) return tl::unexpected(rows.error());
  if (rows->empty())
    return tl::unexpected(Diagnostic::error("nkia_bad_argument",
                                            fmt::format("{} holds no results of run '{}'", db_path, id),
                                            "omit --run for the most recent run"));
  switch (format) {
    case ExportFormat::kCsv: return export_csv(*rows);
    case ExportFormat::kKernelBench: return export_kernelbench(*rows);
    case ExportFormat::kKernelBenchBaseline: return export_kernelbench_baseline(*rows);
    case ExportFormat::kPassAtK: return export_pass_at_k(*rows);
  }
  return std::string();
}

}  // namespace nki_agent
