// report/export.cpp — CSV (RFC 4180 quoting) and KernelBench's two JSON shapes.
#include "report/export.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

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

}  // namespace

Result<ExportFormat> export_format_from_name(const std::string& name) {
  if (name == "csv") return ExportFormat::kCsv;
  if (name == "kernelbench") return ExportFormat::kKernelBench;
  if (name == "kernelbench-baseline") return ExportFormat::kKernelBenchBaseline;
  return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("no export format '{}'", name),
                                          "the formats are csv, kernelbench and kernelbench-baseline"));
}

std::string export_csv(const std::vector<TaskRow>& rows) {
  std::string out =
      "run_id,task_id,task,level,category,status,compiled,passed,check,speedup,candidate_ms,baseline_ms,"
      "roofline_fraction,turns,tool_calls,input_tokens,output_tokens,cost_usd,seconds,trajectory,error\n";
  for (const auto& r : rows) {
    const json sp = speed_of(r);
    const std::string check =
        r.result.is_object() && r.result.contains("verify") ? r.result["verify"].value("check", "") : "";
    const double cand = ms(sp, "candidate_seconds"), base = ms(sp, "baseline_seconds");
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.run_id), csv_field(r.task_id),
        csv_field(r.task), r.level, csv_field(r.category), csv_field(r.status), r.compiled ? 1 : 0, r.passed ? 1 : 0,
        csv_field(check), r.speedup, cand < 0 ? std::string() : fmt::format("{}", cand),
        base < 0 ? std::string() : fmt::format("{}", base), sp.value("roofline_fraction", 0.0), r.turns, r.tool_calls,
        r.input_tokens, r.output_tokens, r.cost_usd, r.seconds, csv_field(r.trajectory), csv_field(r.error));
  }
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
    if (r.result.is_object() && r.result.contains("verify")) metadata["check"] = r.result["verify"].value("check", "");
    if (!r.error.empty()) metadata["error"] = r.error;
    if (r.passed && r.speedup > 10) metadata["excessive_speedup"] = true;
    out[r.task_id] = json::array({{{"sample_id", 0},
                                   {"compiled", r.compiled},
                                   {"correctness", r.passed},
                                   {"metadata", metadata},
                                   {"runtime", runtime},
                                   {"runtime_stats", runtime < 0 ? json::object() : stats(runtime, target)}}});
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
  std::error_code ec;
  if (!std::filesystem::is_regular_file(db_path, ec))
    return tl::unexpected(
        Diagnostic::error("nkia_bad_argument", fmt::format("no results database {}", db_path),
                          "give the .sqlite file a bench run wrote (--db, default <out>/bench.sqlite)"));
  auto store = ResultStore::open(db_path);
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
  }
  return std::string();
}

}  // namespace nki_agent
