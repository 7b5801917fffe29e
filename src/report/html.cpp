// report/html.cpp — the report page: sections, tables and the charts put together.
#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/version.h"
#include "report/charts.h"
#include "report/compare.h"
#include "report/html_assets.h"
#include "report/markup.h"

namespace nki_agent {

namespace {

std::string esc(std::string_view s) {
  return escape_markup(s);
}

std::string outcome_label(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "passed";
    case Outcome::kFailedCheck: return "failed check";
    case Outcome::kCompileError: return "compile error";
    case Outcome::kBudgetExhausted: return "budget exhausted";
    case Outcome::kRefused: return "refused";
    case Outcome::kEndpointFailure: return "endpoint failure (not counted)";
    case Outcome::kInterrupted: return "interrupted (not counted)";
    case Outcome::kBroken: return "broken task (not counted)";
  }
  return "";
}

std::string outcome_cell(const TaskView* t) {
  if (!t) return "<td class=\"text\" data-sort=\"\">—</td>";
  const std::string name(outcome_name(t->outcome));
  return fmt::format("<td class=\"text outcome o-{0}\" data-sort=\"{0}\">{1}</td>", name, outcome_label(t->outcome));
}

// A numeric cell: the exact value for sorting and tests, the shown text formatted.
std::string num_cell(const char* key, double value, const std::string& shown) {
  return fmt::format("<td data-key=\"{}\" data-value=\"{}\" data-sort=\"{}\">{}</td>", key, format_number(value, 6),
                     format_number(value, 6), shown);
}

std::string runs_section(const std::vector<RunReport>& runs) {
  std::string s =
      "<section id=\"runs\">\n<h2>Runs</h2>\n<table id=\"runs-table\">\n<thead><tr><th class=\"text\">run</th>"
      "<th class=\"text\">model</th><th class=\"text\">created</th><th class=\"text\">prompt</th>"
      "<th class=\"text\">tasks root</th><th>rows</th></tr></thead>\n<tbody>\n";
  for (size_t k = 0; k < runs.size(); ++k) {
    const auto& r = runs[k].run;
    std::string prompt;
    if (r.options.is_object() && r.options.contains("prompt_version") && r.options["prompt_version"].is_string())
      prompt = r.options["prompt_version"].get<std::string>();
    s += fmt::format(
        "<tr><td class=\"text\">{}{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td>"
        "<td class=\"text\">{}</td><td>{}</td></tr>\n",
        runs.size() > 1 ? (k == 0 ? "A: " : fmt::format("B{}: ", runs.size() > 2 ? std::to_string(k) : "")) : "",
        esc(r.run_id), esc(r.model), esc(r.created), esc(prompt), esc(r.tasks_root), runs[k].tasks.size());
  }
  return s + "</tbody>\n</table>\n</section>\n";
}

std::string summary_row(const GroupSummary& g, const char* kind) {
  std::string s = fmt::format("<tr class=\"group-{}\" data-group=\"{}\"><td class=\"text\">{}</td>", kind, esc(g.name),
                              esc(g.name));
  s += num_cell("tasks", g.tasks, std::to_string(g.tasks));
  s += num_cell("broken", g.broken, std::to_string(g.broken));
  s += num_cell("interrupted", g.interrupted, std::to_string(g.interrupted));
  s += num_cell("compile", g.compile_share(), format_percent(g.compile_share(), g.tasks));
  s += num_cell("pass", g.pass_share(), format_percent(g.pass_share(), g.tasks));
  for (size_t i = 0; i < kFastThresholds.size(); ++i) {
    const std::string key = "fast_" + format_number(kFastThresholds[i], 1);
    s += num_cell(key.c_str(), g.fast[i], format_share(g.fast[i], g.tasks));
  }
  s += num_cell("geomean", g.geomean_speedup, format_speedup(g.geomean_speedup));
  s += num_cell("input_tokens", static_cast<double>(g.input_tokens), format_count(g.input_tokens));
  s += num_cell("output_tokens", static_cast<double>(g.output_tokens), format_count(g.output_tokens));
  s += num_cell("cost", g.cost_usd, format_cost(g.cost_usd, g.cost_stored));
  s += num_cell("seconds", g.seconds, format_number(g.seconds, 1));
  return s + "</tr>\n";
}

// A summary table: `total` (when given) then `groups`.
std::string summary_table(const std::string& id, const char* kind, const std::vector<GroupSummary>& groups,
                          const GroupSummary* total) {
  std::string s = fmt::format(
      "<table class=\"summary\" id=\"{}\">\n<thead><tr><th class=\"text\">{}</th><th>tasks</th><th>broken</th>"
      "<th>interrupted</th><th>compile %</th><th>pass %</th>",
      id, kind);
  for (double p : kFastThresholds) s += fmt::format("<th>fast_{}</th>", format_number(p, 1));
  s +=
      "<th>geomean</th><th>input tokens</th><th>output tokens</th><th>cost</th><th>task s</th></tr></thead>\n<tbody>\n";
  if (total) s += summary_row(*total, "all");
  for (const auto& g : groups) s += summary_row(g, kind);
  return s + "</tbody>\n</table>\n";
}

// pass@k for k = 1 .. K, one row per group (all, then each level), under bench --samples K.
std::string pass_at_k_table(const RunReport& run, size_t k) {
  std::string s = fmt::format(
      "<table class=\"summary\" id=\"pass-at-k-{}\">\n<thead><tr><th class=\"text\">group</th><th>tasks</th>", k);
  for (int j = 1; j <= run.samples; ++j) s += fmt::format("<th>pass@{}</th>", j);
  s += "</tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < run.pass_at_k.size(); i += static_cast<size_t>(run.samples)) {
    const PassAtK& first = run.pass_at_k[i];
    s += fmt::format("<tr data-group=\"{0}\"><td class=\"text\">{0}</td>", esc(first.group));
    s += num_cell("tasks", first.tasks, std::to_string(first.tasks));
    for (int j = 0; j < run.samples && i + static_cast<size_t>(j) < run.pass_at_k.size(); ++j) {
      const PassAtK& p = run.pass_at_k[i + static_cast<size_t>(j)];
      const std::string key = fmt::format("pass_at_{}", p.k);
      s += num_cell(key.c_str(), p.value, p.tasks > 0 ? format_share(p.value, p.tasks) : "—");
    }
    s += "</tr>\n";
  }
  return s + "</tbody>\n</table>\n";
}

std::string summary_section(const std::vector<RunReport>& runs) {
  std::string s =
      "<section id=\"summary\">\n<h2>Summary</h2>\n<p class=\"note\">Shares are over the tasks with a result. "
      "Broken tasks (the task or the infrastructure failed) and interrupted ones (the model endpoint failed or "
      "the run was stopped) are counted apart: in no share and no denominator, never a kernel failure. fast_p "
      "is the share of tasks correct <em>and</em> faster than p × the eager baseline (strictly); the geomean "
      "speedup is over the correct tasks.</p>\n";
  for (size_t k = 0; k < runs.size(); ++k) {
    s += fmt::format("<h3>{}</h3>\n", esc(run_label(runs[k])));
    s += summary_table(fmt::format("summary-{}", k), "level", runs[k].levels, &runs[k].total);
    if (runs[k].samples > 1) {
      s += fmt::format(
          "<p class=\"note\">{} samples per task: the shares above are over episodes. pass@k is the unbiased "
          "estimator 1 − C(n−c, k)/C(n, k) per task (n episodes with a result, c passing), averaged over the tasks "
          "with at least k.</p>\n",
          runs[k].samples);
      s += pass_at_k_table(runs[k], k);
    }
    s += fmt::format("<details class=\"categories\"><summary>by category ({})</summary>\n", runs[k].categories.size());
    s += summary_table(fmt::format("categories-{}", k), "category", runs[k].categories, nullptr);
    s += "</details>\n";
  }
  return s + "</section>\n";
}

std::string charts_section(const std::vector<RunReport>& runs) {
  std::string s = "<section id=\"charts\">\n<h2>Charts</h2>\n<div class=\"charts\">\n";
  for (const auto& c : render_run_charts(runs)) s += c;
  return s + "</div>\n</section>\n";
}

std::string fact(const char* key, double value, const std::string& label, const std::string& shown) {
  return fmt::format("<dt>{}</dt><dd data-key=\"{}\" data-value=\"{}\">{}</dd>\n", label, key, format_number(value, 6),
                     shown);
}

std::string signed_points(double share) {
  return fmt::format("{}{:.1f} pp", share > 0 ? "+" : "", 100 * share);
}

int verdict_order(Verdict v) {
  return static_cast<int>(v);
}

std::string comparison_block(const RunReport& a, const RunReport& b, size_t k) {
  const RunComparison c = compare_runs(a, b);
  const auto& p = c.pass_rate;
  std::string s = fmt::format("<div class=\"comparison\" id=\"comparison-{}\">\n<h3>B = {} against A = {}</h3>\n", k,
                              esc(run_label(b)), esc(run_label(a)));
  s += "<dl class=\"facts\">\n";
  s += fact("paired", p.n, "paired tasks (a result in both)", std::to_string(p.n));
  s += fact("a_pass_rate", p.n ? static_cast<double>(c.a_passed) / p.n : 0, "A passes",
            fmt::format("{} ({})", c.a_passed, format_percent(p.n ? 1.0 * c.a_passed / p.n : 0, p.n)));
  s += fact("b_pass_rate", p.n ? static_cast<double>(c.b_passed) / p.n : 0, "B passes",
            fmt::format("{} ({})", c.b_passed, format_percent(p.n ? 1.0 * c.b_passed / p.n : 0, p.n)));
  s += fact("difference", p.difference, "pass-rate difference B − A", p.n ? signed_points(p.difference) : "—");
  s += fact("ci_low", p.low, "95% CI, low", p.n ? signed_points(p.low) : "—");
  s += fact("ci_high", p.high, "95% CI, high", p.n ? signed_points(p.high) : "—");
  s += fact("mcnemar_p", p.mcnemar_p, "McNemar exact p", format_number(p.mcnemar_p, 4));
  s += fact("wins", c.wins(), "B wins (gains + faster)", std::to_string(c.wins()));
  s += fact("losses", c.losses(), "B losses (losses + slower)", std::to_string(c.losses()));
  s += fact("gains", p.gains, "only B passes", std::to_string(p.gains));
  s += fact("pass_losses", p.losses, "only A passes", std::to_string(p.losses));
  s += fact("faster", c.faster, "both pass, B faster", std::to_string(c.faster));
  s += fact("slower", c.slower, "both pass, B slower", std::to_string(c.slower));
  s += fact("same_speed", c.same_speed, "both pass, same speed (±1%)", std::to_string(c.same_speed));
  s += fact("both_fail", c.both_fail, "both fail", std::to_string(c.both_fail));
  s += fact("unpaired", c.unpaired, "unpaired (missing, broken or interrupted in a run)", std::to_string(c.unpaired));
  s += fact("geomean_ratio", c.geomean_ratio, "geomean of B ÷ A speedups (both pass)", format_speedup(c.geomean_ratio));
  s += "</dl>\n<p class=\"note\">The interval is the normal (Wald) approximation for paired proportions, the one "
       "behind McNemar's test: d = (g − l)/n, se = √((g + l) − (g − l)²/n)/n, d ± 1.96·se. It is "
       "closed-form (no resampling, no seed); with few discordant tasks trust McNemar's exact p instead.</p>\n";
  s += render_comparison_chart(c, fmt::format("chart-compare-{}", k));
  auto tasks = c.tasks;
  std::stable_sort(tasks.begin(), tasks.end(), [](const PairedTask& x, const PairedTask& y) {
    return verdict_order(x.verdict) < verdict_order(y.verdict);
  });
  s += fmt::format(
      "<table class=\"sortable compare\" id=\"comparison-table-{}\">\n<thead><tr><th class=\"text\">task id</th>"
      "<th class=\"text\">task</th><th class=\"text\">A</th><th>A speedup</th><th class=\"text\">B</th>"
      "<th>B speedup</th><th>B ÷ A</th><th class=\"text\">verdict</th></tr></thead>\n<tbody>\n",
      k);
  for (const auto& t : tasks) {
    const std::string v(verdict_name(t.verdict));
    s += fmt::format("<tr data-verdict=\"{}\"><td class=\"text\">{}</td><td class=\"text\">{}</td>", v, esc(t.task_id),
                     esc(t.task));
    s += outcome_cell(t.a);
    s += num_cell("a_speedup", t.a ? t.a->row.speedup : 0, format_speedup(t.a ? t.a->row.speedup : 0));
    s += outcome_cell(t.b);
    s += num_cell("b_speedup", t.b ? t.b->row.speedup : 0, format_speedup(t.b ? t.b->row.speedup : 0));
    s += num_cell("ratio", t.speed_ratio, format_speedup(t.speed_ratio));
    s += fmt::format("<td class=\"text v-{0}\" data-sort=\"{1}\">{0}</td></tr>\n", v, verdict_order(t.verdict));
  }
  return s + "</tbody>\n</table>\n</div>\n";
}

std::string comparison_section(const std::vector<RunReport>& runs) {
  if (runs.size() < 2) return {};
  std::string s = "<section id=\"comparison\">\n<h2>Comparison</h2>\n";
  for (size_t k = 1; k < runs.size(); ++k) s += comparison_block(runs[0], runs[k], k);
  return s + "</section>\n";
}

std::string detail_fact(const std::string& label, const std::string& value) {
  return value.empty() ? std::string() : fmt::format("<dt>{}</dt><dd>{}</dd>\n", label, esc(value));
}

std::string ms_text(double ms) {
  return ms < 0 ? std::string() : format_number(ms, 6) + " ms";
}

std::string trajectory_block(const TrajectoryView& v) {
  if (v.path.empty()) return "<p class=\"note\">no trajectory (a run without a model)</p>\n";
  if (!v.found) return fmt::format("<p class=\"note\">trajectory file not found: {}</p>\n", esc(v.path));
  std::string s = fmt::format("<details class=\"trajectory\"><summary>trajectory ({} events{})</summary>\n",
                              v.events.size(), v.truncated ? ", cut: later events left out" : "");
  for (const auto& e : v.events) {
    s += fmt::format("<div class=\"event {}{}\"><div class=\"title\">{}</div>", esc(e.kind), e.is_error ? " error" : "",
                     esc(e.title));
    if (!e.text.empty()) s += "<pre>" + esc(e.text) + "</pre>";
    s += "</div>\n";
  }
  return s + "</details>\n";
}

std::string detail_row(const TaskView& t, int columns) {
  const TaskRow& r = t.row;
  std::string s = fmt::format("<tr class=\"detail\" hidden><td colspan=\"{}\">\n<dl class=\"facts\">\n", columns);
  s += detail_fact("status", r.status);
  s += detail_fact("failed check", t.check);
  s += detail_fact("diagnostic code", t.code);
  s += detail_fact("sample / seed", fmt::format("{} / {}", r.sample, r.seed));
  s += detail_fact("kernel time", ms_text(t.candidate_ms));
  s += detail_fact("baseline time", ms_text(t.baseline_ms));
  s += detail_fact("roofline share", t.roofline_fraction < 0 ? "" : format_number(t.roofline_fraction, 4));
  s += detail_fact("model / tool seconds",
                   t.model_seconds > 0 || t.tool_seconds > 0
                       ? fmt::format("{} / {}", format_number(t.model_seconds, 2), format_number(t.tool_seconds, 2))
                       : "");
  s += detail_fact("best kernel file", r.best_kernel_path);
  s += detail_fact("last kernel file", r.last_kernel_path);
  s += detail_fact("trajectory", r.trajectory);
  s += "</dl>\n";
  const std::string message = !r.error.empty()                ? r.error
                              : t.outcome != Outcome::kPassed ? t.trajectory.last_message
                                                              : "";
  if (!message.empty())
    s += "<div class=\"message\"><b>message</b><pre class=\"message\">" + esc(message) + "</pre></div>\n";
  if (!r.kernel.empty()) {
    const auto lines = std::count(r.kernel.begin(), r.kernel.end(), '\n') + 1;
    s += fmt::format(
        "<details class=\"kernel\"><summary>{} kernel ({} lines)</summary><pre><code>{}</code></pre>"
        "</details>\n",
        t.outcome == Outcome::kPassed ? "best" : "last", lines, esc(r.kernel));
  } else {
    s += "<p class=\"note\">no kernel stored</p>\n";
  }
  s += trajectory_block(t.trajectory);
  return s + "</td></tr>\n";
}

std::string tasks_section(const std::vector<RunReport>& runs) {
  constexpr int kColumns = 15;
  std::string s =
      "<section id=\"tasks\">\n<h2>Tasks</h2>\n<p class=\"note\">Click a header to sort, a row to open the "
      "failing check's message, the kernel and the trajectory.</p>\n<div class=\"controls\">"
      "<input id=\"task-filter\" type=\"search\" placeholder=\"filter: task, category, check…\">"
      "<select id=\"outcome-filter\"><option value=\"\">every outcome</option>";
  for (int o = 0; o < kNumOutcomes; ++o) {
    const auto oc = static_cast<Outcome>(o);
    s += fmt::format("<option value=\"{}\">{}</option>", outcome_name(oc), outcome_label(oc));
  }
  s += "</select>";
  if (runs.size() > 1) {
    s += "<select id=\"run-filter\"><option value=\"\">every run</option>";
    for (const auto& r : runs) s += fmt::format("<option value=\"{0}\">{0}</option>", esc(r.run.run_id));
    s += "</select>";
  }
  s += "<span id=\"task-count\"></span></div>\n<table class=\"sortable\" id=\"task-table\">\n<thead><tr>"
       "<th class=\"text\">run</th><th class=\"text\">task id</th><th class=\"text\">task</th><th>level</th>"
       "<th class=\"text\">category</th><th class=\"text\">outcome</th><th class=\"text\">failure</th>"
       "<th>speedup</th><th>turns</th><th>first pass</th><th>tool calls</th><th>input tokens</th>"
       "<th>output tokens</th><th>cost</th><th>seconds</th></tr></thead>\n<tbody>\n";
  for (const auto& run : runs)
    for (const auto& t : run.tasks) {
      const TaskRow& r = t.row;
      const std::string failure = !is_result(t.outcome) ? std::string(outcome_name(t.outcome)) : t.failure_kind;
      s += fmt::format("<tr class=\"task\" data-run=\"{}\" data-task=\"{}\" data-outcome=\"{}\" data-sample=\"{}\">",
                       esc(r.run_id), esc(r.task_id), outcome_name(t.outcome), r.sample);
      s +=
          fmt::format("<td class=\"text\">{}</td><td class=\"text\">{}{}</td><td class=\"text\">{}</td>", esc(r.run_id),
                      esc(r.task_id), r.sample > 0 ? fmt::format(" (sample {})", r.sample) : "", esc(r.task));
      s += num_cell("level", r.level, std::to_string(r.level));
      s += fmt::format("<td class=\"text\">{}</td>", esc(r.category));
      s += outcome_cell(&t);
      s += fmt::format("<td class=\"text\">{}</td>", esc(failure));
      s += num_cell("speedup", r.speedup, format_speedup(r.speedup));
      s += num_cell("turns", r.turns, std::to_string(r.turns));
      s += num_cell("first_pass_turn", t.first_pass_turn,
                    t.first_pass_turn > 0 ? std::to_string(t.first_pass_turn) : "—");
      s += num_cell("tool_calls", r.tool_calls, std::to_string(r.tool_calls));
      s += num_cell("input_tokens", static_cast<double>(r.input_tokens), format_count(r.input_tokens));
      s += num_cell("output_tokens", static_cast<double>(r.output_tokens), format_count(r.output_tokens));
      s += num_cell("cost", r.cost_usd, format_cost(r.cost_usd, r.cost_usd > 0));
      s += num_cell("seconds", r.seconds, format_number(r.seconds, 1));
      s += "</tr>\n";
      s += detail_row(t, kColumns);
    }
  return s + "</tbody>\n</table>\n</section>\n";
}

}  // namespace

std::string render_report_html(const std::vector<RunReport>& runs, const HtmlOptions& options) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  s += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n", esc(options.title),
                   report_style_sheet(), esc(options.title));
  s += fmt::format(
      "<p class=\"note\">nki-agent {} · {} run{} · simulated time on the nki-agent NeuronCore simulator. This file "
      "is self-contained: it loads nothing.</p>\n",
      esc(kVersion), runs.size(), runs.size() == 1 ? "" : "s");
  s += runs_section(runs);
  s += summary_section(runs);
  s += charts_section(runs);
  s += comparison_section(runs);
  s += tasks_section(runs);
  s += fmt::format("<script>{}</script>\n</body>\n</html>\n", report_script());
  return s;
}

}  // namespace nki_agent
