// The HTML report (report/html.h) from a fixture database of two runs with every status
// (test_report_fixture.h): the summary's figures and fast_p against hand-computed values, broken
// and interrupted tasks counted apart, every chart, the comparison's counts and interval, the
// per-task table with its details, escaping of hostile text; the pieces (outcomes, bins, the
// interval, escaping) on their own; and the `nki-agent report` command.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "report/charts.h"
#include "report/compare.h"
#include "report/html.h"
#include "report/markup.h"
#include "report/report.h"
#include "support/cli_runner.h"
#include "support/test_files.h"
#include "test_report_fixture.h"

namespace fs = std::filesystem;

namespace nki_agent {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The text of the element with id `id` up to its closing tag `close` (e.g. "</table>").
std::string element(const std::string& html, const std::string& id, const std::string& close) {
  const size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return {};
  const size_t end = html.find(close, at);
  return html.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The data-value of the cell `key` in the row of `group` in `table` ("" when absent).
double cell(const std::string& table, const std::string& group, const std::string& key) {
  const size_t row = table.find("data-group=\"" + group + "\"");
  if (row == std::string::npos) return NAN;
  const size_t end = table.find("</tr>", row);
  const std::string needle = "data-key=\"" + key + "\" data-value=\"";
  const size_t at = table.find(needle, row);
  if (at == std::string::npos || at > end) return NAN;
  return std::stod(table.substr(at + needle.size()));
}

// The data-value of the fact `key` of a comparison block.
double fact(const std::string& block, const std::string& key) {
  const std::string needle = "<dd data-key=\"" + key + "\" data-value=\"";
  const size_t at = block.find(needle);
  if (at == std::string::npos) return NAN;
  return std::stod(block.substr(at + needle.size()));
}

class ReportHtml : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nkia_report_html_" + std::to_string(::getpid()));
    db_ = testing::write_report_fixture(dir_);
    ASSERT_FALSE(db_.empty());
    ReportOptions o;
    o.run_ids = {"A", "B"};
    auto runs = load_run_reports(db_, o);
    ASSERT_TRUE(runs) << runs.error().format();
    runs_ = std::move(*runs);
    html_ = render_report_html(runs_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string db_, html_;
  std::vector<RunReport> runs_;
};

TEST_F(ReportHtml, TheSummaryOfRunAHasTheHandComputedFigures) {
  const std::string t = element(html_, "summary-0", "</table>");
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(cell(t, "all", "tasks"), 6);
  EXPECT_EQ(cell(t, "all", "broken"), 1);
  EXPECT_EQ(cell(t, "all", "interrupted"), 1);
  EXPECT_NEAR(cell(t, "all", "compile"), 4.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "pass"), 3.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_0"), 3.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_0.5"), 3.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_0.8"), 3.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_1"), 2.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_1.5"), 1.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_2"), 1.0 / 6, 1e-6);
  EXPECT_NEAR(cell(t, "all", "geomean"), 1.392477, 1e-6);
  // Tokens and cost of the tasks with a result only.
  EXPECT_EQ(cell(t, "all", "input_tokens"), 6000);
  EXPECT_NEAR(cell(t, "all", "cost"), 0.06, 1e-9);
  // The shown text.
  EXPECT_NE(t.find(">66.7%<"), std::string::npos);
  EXPECT_NE(t.find(">50.0%<"), std::string::npos);
  EXPECT_NE(t.find(">0.333<"), std::string::npos);
  EXPECT_NE(t.find(">1.39×<"), std::string::npos);
  // Per level: L2 has one broken and one interrupted task apart from its two results.
  EXPECT_EQ(cell(t, "L1", "tasks"), 4);
  EXPECT_NEAR(cell(t, "L1", "fast_1"), 0.25, 1e-6);
  EXPECT_EQ(cell(t, "L2", "tasks"), 2);
  EXPECT_EQ(cell(t, "L2", "broken"), 1);
  EXPECT_EQ(cell(t, "L2", "interrupted"), 1);
  EXPECT_NEAR(cell(t, "L2", "pass"), 0.5, 1e-6);
  // Per category, in a table of its own.
  const std::string c = element(html_, "categories-0", "</table>");
  EXPECT_NEAR(cell(c, "elementwise", "pass"), 1.0, 1e-6);
  EXPECT_NEAR(cell(c, "reductions", "compile"), 0.5, 1e-6);
  EXPECT_NEAR(cell(c, "reductions", "pass"), 0.0, 1e-6);
  EXPECT_EQ(cell(c, "matmul_fusions", "broken"), 1);
}

TEST_F(ReportHtml, TheSummaryOfRunBHasTheHandComputedFastP) {
  const std::string t = element(html_, "summary-1", "</table>");
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(cell(t, "all", "tasks"), 8);
  EXPECT_EQ(cell(t, "all", "broken"), 0);
  EXPECT_NEAR(cell(t, "all", "pass"), 6.0 / 8, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_0.8"), 6.0 / 8, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_1"), 5.0 / 8, 1e-6);  // 1.0 is not above 1
  EXPECT_NEAR(cell(t, "all", "fast_1.5"), 3.0 / 8, 1e-6);
  EXPECT_NEAR(cell(t, "all", "fast_2"), 1.0 / 8, 1e-6);  // 2.0 is not above 2
  EXPECT_NEAR(cell(t, "all", "geomean"), 1.526889, 1e-6);
}

TEST_F(ReportHtml, EveryChartIsAnSvgWithItsId) {
  for (const char* id : {"chart-pass-level", "chart-pass-category", "chart-fast-p", "chart-speedup", "chart-turns",
                         "chart-failures", "chart-compare-1"}) {
    EXPECT_EQ(count_of(html_, std::string("<svg id=\"") + id + "\""), 1u) << id;
  }
  // The fast_p curve marks KernelBench's thresholds with each run's value.
  const std::string fp = element(html_, "chart-fast-p", "</svg>");
  EXPECT_NE(fp.find("data-x=\"1\" data-y=\"0.333333\""), std::string::npos) << fp.substr(0, 3000);
  EXPECT_NE(fp.find("data-x=\"2\" data-y=\"0.125\""), std::string::npos);
  // Pass rate by level: run A's L2 is 1 of 2 (broken and interrupted apart).
  const std::string pl = element(html_, "chart-pass-level", "</svg>");
  EXPECT_NE(pl.find("data-series=\"A (model-a)\" data-category=\"L2\" data-value=\"0.5\""), std::string::npos);
  EXPECT_NE(pl.find("data-series=\"B (model-b)\" data-category=\"all\" data-value=\"0.75\""), std::string::npos);
  // Speedups on a log axis: A's 0.9 is in (1/2, 1], its 2.5 in (2, 4]; B's 1.0 in (1/2, 1] too.
  const std::string sp = element(html_, "chart-speedup", "</svg>");
  EXPECT_NE(sp.find("data-series=\"A (model-a)\" data-category=\"1/2–1×\" data-value=\"1\""), std::string::npos);
  EXPECT_NE(sp.find("data-series=\"A (model-a)\" data-category=\"2–4×\" data-value=\"1\""), std::string::npos);
  EXPECT_NE(sp.find("data-series=\"B (model-b)\" data-category=\"1/2–1×\" data-value=\"1\""), std::string::npos);
  // Turns to the first pass: A passed at turns 1, 3, 2.
  const std::string tu = element(html_, "chart-turns", "</svg>");
  EXPECT_NE(tu.find("data-series=\"A (model-a)\" data-category=\"3\" data-value=\"1\""), std::string::npos);
  EXPECT_NE(tu.find("data-series=\"B (model-b)\" data-category=\"1\" data-value=\"3\""), std::string::npos);
  // Failure kinds: checks, the recovered check of a row that stored none, refusals; no broken task.
  const std::string fk = element(html_, "chart-failures", "</svg>");
  EXPECT_NE(fk.find("data-series=\"A (model-a)\" data-category=\"mismatch\" data-value=\"1\""), std::string::npos);
  EXPECT_NE(fk.find("data-series=\"A (model-a)\" data-category=\"refused\" data-value=\"1\""), std::string::npos);
  EXPECT_NE(fk.find("data-series=\"B (model-b)\" data-category=\"zero_output\" data-value=\"1\""), std::string::npos);
  EXPECT_EQ(fk.find("broken"), std::string::npos);
  EXPECT_EQ(fk.find("interrupted"), std::string::npos);
}

TEST_F(ReportHtml, TheComparisonHasWinsLossesAndThePairedInterval) {
  const std::string c = element(html_, "comparison-1", "</table>");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(fact(c, "paired"), 6);
  EXPECT_NEAR(fact(c, "a_pass_rate"), 0.5, 1e-6);
  EXPECT_NEAR(fact(c, "b_pass_rate"), 5.0 / 6, 1e-6);
  EXPECT_EQ(fact(c, "gains"), 3);
  EXPECT_EQ(fact(c, "pass_losses"), 1);
  EXPECT_EQ(fact(c, "faster"), 1);
  EXPECT_EQ(fact(c, "slower"), 0);
  EXPECT_EQ(fact(c, "same_speed"), 1);
  EXPECT_EQ(fact(c, "both_fail"), 0);
  EXPECT_EQ(fact(c, "unpaired"), 2);
  EXPECT_EQ(fact(c, "wins"), 4);
  EXPECT_EQ(fact(c, "losses"), 1);
  EXPECT_NEAR(fact(c, "difference"), 1.0 / 3, 1e-6);
  EXPECT_NEAR(fact(c, "ci_low"), -0.263065, 1e-6);
  EXPECT_NEAR(fact(c, "ci_high"), 0.929731, 1e-6);
  EXPECT_NEAR(fact(c, "mcnemar_p"), 0.625, 1e-6);
  EXPECT_NE(c.find("+33.3 pp"), std::string::npos);
  // Per task: the verdicts, gains first.
  EXPECT_EQ(count_of(c, "<tr data-verdict=\"gain\">"), 3u);
  EXPECT_EQ(count_of(c, "<tr data-verdict=\"loss\">"), 1u);
  EXPECT_EQ(count_of(c, "<tr data-verdict=\"unpaired\">"), 2u);
  EXPECT_LT(c.find("data-verdict=\"gain\""), c.find("data-verdict=\"loss\""));
  // One run: no comparison.
  std::vector<RunReport> one;
  one.push_back(runs_[0]);
  EXPECT_EQ(render_report_html(one).find("id=\"comparison\""), std::string::npos);
}

TEST_F(ReportHtml, TheTaskTableHasARowAndADetailPerTaskAndRun) {
  const std::string t = element(html_, "task-table", "</table>");
  EXPECT_EQ(count_of(t, "<tr class=\"task\""), 16u);
  EXPECT_EQ(count_of(t, "<tr class=\"detail\" hidden>"), 16u);
  EXPECT_NE(t.find("data-run=\"A\" data-task=\"L2_003\" data-outcome=\"broken\""), std::string::npos);
  EXPECT_NE(t.find("data-run=\"A\" data-task=\"L2_002\" data-outcome=\"interrupted\""), std::string::npos);
  EXPECT_NE(t.find("data-run=\"A\" data-task=\"L1_004\" data-outcome=\"compile_error\""), std::string::npos);
  EXPECT_NE(t.find("data-run=\"B\" data-task=\"L1_002\" data-outcome=\"failed_check\""), std::string::npos);
  // A broken task's message is shown, as a broken task, not as a kernel failure.
  EXPECT_NE(t.find("task.toml: broken"), std::string::npos);
  EXPECT_NE(t.find("broken task (not counted)"), std::string::npos);
  // The recovered check's message and the trajectory's events.
  EXPECT_NE(t.find("output 0 is all zeros"), std::string::npos);
  EXPECT_NE(t.find("trajectory (5 events)"), std::string::npos);
  EXPECT_NE(t.find("turn 1: calls verify"), std::string::npos);
  EXPECT_NE(t.find("FAIL zero_output: output 0 is all zeros &lt;b&gt;"), std::string::npos);
  // The kernel's source.
  EXPECT_NE(t.find("def kernel(a):\n    return a"), std::string::npos);
  // The filter controls.
  EXPECT_NE(html_.find("id=\"task-filter\""), std::string::npos);
  EXPECT_NE(html_.find("id=\"outcome-filter\""), std::string::npos);
  EXPECT_NE(html_.find("id=\"run-filter\""), std::string::npos);
}

TEST_F(ReportHtml, HostileTextIsEscapedEverywhere) {
  EXPECT_EQ(html_.find("<img"), std::string::npos);
  EXPECT_EQ(html_.find("alert(2)</script>"), std::string::npos);
  EXPECT_EQ(count_of(html_, "<script>"), 1u);  // the page's own
  EXPECT_EQ(count_of(html_, "</script>"), 1u);
  EXPECT_NE(
      html_.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot; \xEF\xBF\xBD bad byte"),
      std::string::npos);
  EXPECT_NE(html_.find("&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(2)&lt;/script&gt;"), std::string::npos);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html_.find("<link"), std::string::npos);
  EXPECT_EQ(html_.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html_.find("<script src"), std::string::npos);
  // Deterministic.
  EXPECT_EQ(render_report_html(runs_), html_);
}

TEST(ReportPieces, OutcomesCountBrokenAndInterruptedApart) {
  TaskRow r;
  r.status = "error";
  EXPECT_EQ(outcome_of(r), Outcome::kBroken);
  r.status = "interrupted";
  r.passed = true;
  EXPECT_EQ(outcome_of(r), Outcome::kInterrupted);
  r.status = "passed";
  EXPECT_EQ(outcome_of(r), Outcome::kPassed);
  r.passed = false;
  r.status = "refused";
  EXPECT_EQ(outcome_of(r), Outcome::kRefused);
  r.status = "compile_error";  // an older word: the flags decide
  EXPECT_EQ(outcome_of(r), Outcome::kCompileError);
  r.compiled = true;
  EXPECT_EQ(outcome_of(r), Outcome::kFailedCheck);
  EXPECT_FALSE(is_result(Outcome::kBroken));
  EXPECT_FALSE(is_result(Outcome::kInterrupted));
  EXPECT_TRUE(is_result(Outcome::kRefused));
}

// A row that stores why it ended is read by its own columns first: the outcome, the check and the
// Diagnostic code, the seconds and the roofline; the stored result and the trajectory only fill in.
TEST(ReportPieces, TheStoredOutcomeCheckAndCodeComeFirst) {
  auto row = [](const std::string& id, const std::string& status, const std::string& outcome) {
    TaskRow r;
    r.run_id = "R";
    r.task_id = id;
    r.level = 1;
    r.status = status;
    r.outcome = outcome;
    return r;
  };
  TaskRow check = row("L1_001", "compiled", kOutcomeFailedCheck);
  check.compiled = true;
  check.check = "zero_output";
  check.code = "nkia_verify_zero_output";
  check.result = {{"verify", {{"check", "mismatch"}}}, {"model_seconds", 9.0}};  // the column wins
  check.model_seconds = 2.5;
  TaskRow compile = row("L1_002", "failed", kOutcomeCompileError);
  compile.code = "err_num_partition_exceed_arch_limit";
  TaskRow budget = row("L1_003", "failed", kOutcomeBudgetExhausted);
  TaskRow endpoint = row("L1_004", "interrupted", kOutcomeEndpointFailure);
  TaskRow passed = row("L1_005", "passed", kOutcomePassed);
  passed.passed = passed.compiled = true;
  passed.speedup = 2;
  passed.roofline = 0.4;
  const RunReport rep = build_run_report(RunInfo{"R", "k", "m", "t", nlohmann::json::object(), ""},
                                         {check, compile, budget, endpoint, passed}, false);
  ASSERT_EQ(rep.tasks.size(), 5u);
  EXPECT_EQ(rep.tasks[0].outcome, Outcome::kFailedCheck);
  EXPECT_EQ(rep.tasks[0].check, "zero_output");
  EXPECT_EQ(rep.tasks[0].failure_kind, "zero_output");
  EXPECT_EQ(rep.tasks[0].model_seconds, 2.5);
  EXPECT_EQ(rep.tasks[1].outcome, Outcome::kCompileError);
  EXPECT_EQ(rep.tasks[1].failure_kind, "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(rep.tasks[2].outcome, Outcome::kBudgetExhausted);
  EXPECT_EQ(rep.tasks[2].failure_kind, "budget exhausted");
  EXPECT_EQ(rep.tasks[3].outcome, Outcome::kEndpointFailure);
  EXPECT_FALSE(is_result(Outcome::kEndpointFailure));
  EXPECT_TRUE(is_result(Outcome::kBudgetExhausted));
  EXPECT_EQ(rep.tasks[4].roofline_fraction, 0.4);
  // The endpoint failure is counted apart; the other four are results, one passing.
  EXPECT_EQ(rep.total.tasks, 4);
  EXPECT_EQ(rep.total.interrupted, 1);
  EXPECT_EQ(rep.total.passed, 1);
  EXPECT_EQ(rep.failure_kinds.at("budget exhausted"), 1);
  EXPECT_EQ(rep.failure_kinds.count("endpoint_failure"), 0u);
  const std::string html = render_report_html({rep}, HtmlOptions{});
  EXPECT_NE(html.find("data-task=\"L1_004\" data-outcome=\"endpoint_failure\""), std::string::npos);
  EXPECT_NE(html.find("endpoint failure (not counted)"), std::string::npos);
  EXPECT_NE(html.find("nkia_verify_zero_output"), std::string::npos);  // the detail's diagnostic code
  EXPECT_EQ(html.find("id=\"pass-at-k-0\""), std::string::npos);       // one sample: no pass@k table
}

TEST(ReportPieces, SpeedupBinsAreFactorsOfTwoClosedAbove) {
  const auto labels = speedup_bin_labels();
  ASSERT_EQ(labels.size(), 10u);
  EXPECT_EQ(labels[speedup_bin(1.0)], "1/2–1×");
  EXPECT_EQ(labels[speedup_bin(1.0001)], "1–2×");
  EXPECT_EQ(labels[speedup_bin(2.0)], "1–2×");
  EXPECT_EQ(labels[speedup_bin(0.01)], "≤1/16×");
  EXPECT_EQ(labels[speedup_bin(1.0 / 16)], "≤1/16×");
  EXPECT_EQ(labels[speedup_bin(16.0)], "8–16×");
  EXPECT_EQ(labels[speedup_bin(100.0)], ">16×");
  EXPECT_EQ(labels[speedup_bin(INFINITY)], ">16×");
}

TEST(ReportPieces, ThePairedIntervalAndMcNemar) {
  const PairedInterval p = paired_interval(6, 3, 1);
  EXPECT_NEAR(p.difference, 1.0 / 3, 1e-12);
  const double se = std::sqrt(4 - 4.0 / 6) / 6;
  EXPECT_NEAR(p.low, 1.0 / 3 - 1.959963984540054 * se, 1e-12);
  EXPECT_NEAR(p.high, 1.0 / 3 + 1.959963984540054 * se, 1e-12);
  EXPECT_NEAR(p.mcnemar_p, 10.0 / 16, 1e-12);
  // Clipped, and none discordant.
  const PairedInterval all = paired_interval(3, 3, 0);
  EXPECT_NEAR(all.difference, 1, 1e-12);
  EXPECT_LE(all.high, 1.0);
  EXPECT_NEAR(paired_interval(5, 0, 0).mcnemar_p, 1, 1e-12);
  EXPECT_NEAR(mcnemar_exact_p(0, 10), 2.0 / 1024, 1e-12);
  EXPECT_NEAR(paired_interval(0, 0, 0).difference, 0, 1e-12);
}

TEST(ReportPieces, EscapingRepairsUtf8AndDropsControls) {
  EXPECT_EQ(escape_markup("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(escape_markup("é ✓ 🙂"), "é ✓ 🙂");
  EXPECT_EQ(escape_markup("x\xff\xc0\xafy"), "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDy");  // bad and overlong
  EXPECT_EQ(escape_markup("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");      // a surrogate
  EXPECT_EQ(escape_markup(std::string("a\0b\x01\tc\n", 7)), "ab\tc\n");
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(2.0), "2");
  EXPECT_EQ(format_count(1234567), "1,234,567");
}

TEST(ReportPieces, EmptyChartsSayWhy) {
  RunReport r;
  r.run.run_id = "baseline";
  const auto charts = render_run_charts({r});
  ASSERT_EQ(charts.size(), 6u);
  EXPECT_NE(charts[4].find("no pass after a model turn"), std::string::npos);
  EXPECT_NE(charts[3].find("no correct kernel"), std::string::npos);
}

TEST_F(ReportHtml, TheReportCommandWritesTheFile) {
  using testing::run_cli;
  const std::string out = (dir_ / "r.html").string();
  auto r = run_cli("report " + db_ + " --run A --run B -o " + out, testing::Stderr::kMerge);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("report: " + out + " (2 runs, 16 task rows)"), std::string::npos) << r.out;
  EXPECT_EQ(testing::read_text(out), html_);
  // Default: the most recent run, beside the database; --json.
  r = run_cli("report " + db_ + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["file"], (dir_ / "report.html").string());
  EXPECT_EQ(j["runs"], nlohmann::json::array({"B"}));
  EXPECT_TRUE(fs::exists(dir_ / "report.html"));
  // An unknown run, a missing database.
  r = run_cli("report " + db_ + " --run nope -o " + out, testing::Stderr::kMerge);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("holds no run 'nope'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("B, A"), std::string::npos) << r.out;
  r = run_cli("report " + (dir_ / "missing.sqlite").string(), testing::Stderr::kMerge);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("nkia_bad_argument"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nki_agent
