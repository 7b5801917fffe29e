// Exports of a benchmark run (report/export.h): the CSV per-task table with RFC 4180 quoting, and
// KernelBench's eval-results and baseline JSON shapes (RL-CONVENTIONS §4.1) with their exact field
// sets, from a fixture database holding two runs and every status; the CLI's export command.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "report/export.h"
#include "support/cli_runner.h"
#include "support/test_files.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace nki_agent {
namespace {

TaskRow row(const std::string& run, const std::string& id, const std::string& status, bool passed, double cand_s,
            double base_s) {
  TaskRow r;
  r.run_id = run;
  r.task_id = id;
  r.task = id + "_name";
  r.level = 1;
  r.category = "elementwise";
  r.status = status;
  r.compiled = status != "compile_error";
  r.passed = passed;
  r.speedup = passed && cand_s > 0 ? base_s / cand_s : 0;
  r.turns = 2;
  r.tool_calls = 3;
  json speed = {{"available", cand_s > 0}, {"target", "trn1"}};
  if (cand_s > 0)
    speed.update({{"candidate_seconds", cand_s}, {"baseline_seconds", base_s}, {"roofline_fraction", 0.25}});
  r.result = {{"verify", {{"passed", passed}, {"check", passed ? "" : "mismatch"}, {"speed", speed}}}};
  return r;
}

class ReportExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nkia_export_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "bench.sqlite").string();
    auto store = ResultStore::open(db_);
    ASSERT_TRUE(store) << store.error().format();
    ASSERT_TRUE((*store)->add_run({"old", "k", "m", "tasks", json::object(), "2026-01-01T00:00:00Z"}));
    ASSERT_TRUE((*store)->add_result(row("old", "L1_001", "passed", true, 2e-6, 2e-6)));
    ASSERT_TRUE((*store)->add_run({"new", "k", "m", "tasks", json::object(), "2026-02-01T00:00:00Z"}));
    rows_ = {row("new", "L1_001", "passed", true, 1e-6, 3e-6), row("new", "L1_002", "failed", false, 0, 0),
             row("new", "L1_003", "compile_error", false, 0, 0)};
    rows_[1].error = "output 0: 12 elements differ, first at [3, \"x\"]";
    for (const auto& r : rows_) ASSERT_TRUE((*store)->add_result(r));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string db_;
  std::vector<TaskRow> rows_;
};

TEST_F(ReportExport, TheCsvHasAHeaderAndOneQuotedRowPerTask) {
  const std::string csv = export_csv(rows_);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = csv.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(csv.substr(start, nl - start));
  ASSERT_EQ(lines.size(), 4u) << csv;
  EXPECT_EQ(lines[0].rfind("run_id,task_id,task,level,category,status,compiled,passed,check,speedup,", 0), 0u);
  EXPECT_NE(lines[1].find("new,L1_001,L1_001_name,1,elementwise,passed,1,1,,3,0.001,0.003,0.25,2,3,"),
            std::string::npos)
      << lines[1];
  // A field with a comma and quotes is quoted, its quotes doubled.
  EXPECT_NE(lines[2].find(R"("output 0: 12 elements differ, first at [3, ""x""]")"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find(",failed,1,0,mismatch,0,,,"), std::string::npos) << lines[2];
}

TEST_F(ReportExport, KernelBenchEvalResultsHaveItsFieldsAndMinusOneForUntimedKernels) {
  const json j = json::parse(export_kernelbench(rows_));
  ASSERT_EQ(j.size(), 3u);
  const std::set<std::string> fields = {"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats"};
  for (const auto& [id, samples] : j.items()) {
    ASSERT_EQ(samples.size(), 1u) << id;
    std::set<std::string> got;
    for (const auto& [k, v] : samples[0].items()) got.insert(k);
    EXPECT_EQ(got, fields) << id;
    EXPECT_EQ(samples[0]["sample_id"], 0);
  }
  EXPECT_DOUBLE_EQ(j["L1_001"][0]["runtime"].get<double>(), 0.001);
  EXPECT_EQ(j["L1_001"][0]["correctness"], true);
  EXPECT_DOUBLE_EQ(j["L1_001"][0]["runtime_stats"]["mean"].get<double>(), 0.001);
  EXPECT_EQ(j["L1_002"][0]["runtime"], -1.0);
  EXPECT_EQ(j["L1_002"][0]["correctness"], false);
  EXPECT_EQ(j["L1_002"][0]["metadata"]["check"], "mismatch");
  EXPECT_EQ(j["L1_003"][0]["compiled"], false);
}

TEST_F(ReportExport, KernelBenchBaselinesNameEveryTimedTaskByLevel) {
  const json j = json::parse(export_kernelbench_baseline(rows_));
  ASSERT_TRUE(j.contains("level1")) << j.dump();
  ASSERT_EQ(j["level1"].size(), 1u) << j.dump();  // the untimed rows have no baseline figure
  const json& b = j["level1"]["L1_001_name.py"];
  EXPECT_DOUBLE_EQ(b["mean"].get<double>(), 0.003);
  for (const char* f : {"mean", "std", "min", "max", "num_trials", "hardware", "device"})
    EXPECT_TRUE(b.contains(f)) << f;
}

TEST_F(ReportExport, ARunIsTheMostRecentUnlessNamedAndBadInputIsAnError) {
  auto latest = export_run(db_, "", ExportFormat::kCsv);
  ASSERT_TRUE(latest) << latest.error().format();
  EXPECT_NE(latest->find("\nnew,L1_003,"), std::string::npos);
  EXPECT_EQ(latest->find("\nold,"), std::string::npos);
  auto old = export_run(db_, "old", ExportFormat::kCsv);
  ASSERT_TRUE(old);
  EXPECT_NE(old->find("\nold,L1_001,"), std::string::npos);
  auto none = export_run(db_, "no_such_run", ExportFormat::kCsv);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "nkia_bad_argument");
  const std::string missing = (dir_ / "missing.sqlite").string();
  EXPECT_FALSE(export_run(missing, "", ExportFormat::kCsv));
  EXPECT_FALSE(fs::exists(missing)) << "exporting a missing database created it";
  EXPECT_FALSE(export_format_from_name("xlsx"));
}

TEST_F(ReportExport, TheCliWritesTheFile) {
  const std::string out = (dir_ / "eval.json").string();
  auto r = testing::run_cli("export " + db_ + " --format kernelbench -o " + out, testing::Stderr::kMerge);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(testing::read_text(out), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j.size(), 3u);
  auto bad = testing::run_cli("export " + db_ + " --format xlsx", testing::Stderr::kMerge);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
}

}  // namespace
}  // namespace nki_agent
