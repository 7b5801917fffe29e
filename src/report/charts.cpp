// report/charts.cpp — runs to chart specifications.
#include "report/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/svg.h"

namespace nki_agent {

namespace {

constexpr int kLowestBinExponent = -4;  // 1/16
constexpr int kHighestBinExponent = 4;  // 16

std::string power_of_two(int e) {
  return e >= 0 ? fmt::format("{}", 1 << e) : fmt::format("1/{}", 1 << -e);
}

// The union of the runs' group names, in the order first met.
std::vector<std::string> group_names(const std::vector<RunReport>& runs, bool levels) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& r : runs)
    for (const auto& g : levels ? r.levels : r.categories)
      if (seen.insert(g.name).second) names.push_back(g.name);
  if (levels)  // "L10" after "L9"
    std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
  else
    std::sort(names.begin(), names.end());
  return names;
}

BarChart pass_rate_chart(const std::vector<RunReport>& runs, bool levels) {
  BarChart c;
  c.id = levels ? "chart-pass-level" : "chart-pass-category";
  c.title = levels ? "Pass rate by level" : "Pass rate by category";
  c.x_label = levels ? "level" : "pass rate (tasks with a result)";
  c.y_label = "pass rate";
  c.percent = true;
  c.horizontal = !levels;
  c.categories = group_names(runs, levels);
  if (levels) c.categories.insert(c.categories.begin(), "all");
  for (const auto& r : runs) {
    ChartSeries s{run_label(r), {}};
    for (const auto& name : c.categories) {
      double v = 0;
      if (name == "all" && levels) v = r.total.pass_share();
      for (const auto& g : levels ? r.levels : r.categories)
        if (g.name == name) v = g.pass_share();
      s.values.push_back(v);
    }
    c.series.push_back(std::move(s));
  }
  c.empty_note = "no task";
  return c;
}

LineChart fast_p_chart(const std::vector<RunReport>& runs) {
  LineChart c;
  c.id = "chart-fast-p";
  c.title = "fast_p: share of tasks correct and faster than p × the baseline";
  c.x_label = "p";
  c.y_label = "fast_p";
  c.x_min = 0;
  c.x_max = kFastCurveMax;
  c.y_percent = true;
  for (double t = 0; t <= kFastCurveMax + 1e-9; t += 0.5) c.x_ticks.push_back(t);
  const int steps = static_cast<int>(std::lround(kFastCurveMax / kFastCurveStep));
  for (const auto& r : runs) {
    LineSeries s;
    s.name = run_label(r);
    const auto tasks = r.task_pointers();
    for (int i = 0; i <= steps; ++i) {
      const double p = kFastCurveStep * i;
      s.points.push_back({p, fast_at(tasks, p)});
    }
    for (size_t i = 0; i < kFastThresholds.size(); ++i) s.markers.push_back({kFastThresholds[i], r.total.fast[i]});
    c.series.push_back(std::move(s));
  }
  return c;
}

BarChart speedup_chart(const std::vector<RunReport>& runs) {
  BarChart c;
  c.id = "chart-speedup";
  c.title = "Speedups of correct kernels (log axis)";
  c.x_label = "speedup over the eager baseline, bins of ×2 (lo, hi]";
  c.y_label = "tasks";
  c.categories = speedup_bin_labels();
  bool any = false;
  for (const auto& r : runs) {
    ChartSeries s{run_label(r), std::vector<double>(c.categories.size(), 0.0)};
    for (const auto& t : r.tasks)
      if (t.outcome == Outcome::kPassed && t.row.speedup > 0) {
        s.values[speedup_bin(t.row.speedup)] += 1;
        any = true;
      }
    c.series.push_back(std::move(s));
  }
  if (!any) {
    c.categories.clear();
    c.empty_note = "no correct kernel with a measured speedup";
  }
  return c;
}

BarChart turns_chart(const std::vector<RunReport>& runs) {
  BarChart c;
  c.id = "chart-turns";
  c.title = "Turns to the first pass";
  c.x_label = "turn of the first passing kernel";
  c.y_label = "tasks";
  int max_turn = 0;
  for (const auto& r : runs)
    for (const auto& t : r.tasks)
      if (t.outcome == Outcome::kPassed) max_turn = std::max(max_turn, t.first_pass_turn);
  for (int i = 1; i <= max_turn; ++i) c.categories.push_back(std::to_string(i));
  for (const auto& r : runs) {
    ChartSeries s{run_label(r), std::vector<double>(c.categories.size(), 0.0)};
    for (const auto& t : r.tasks)
      if (t.outcome == Outcome::kPassed && t.first_pass_turn > 0) s.values[t.first_pass_turn - 1] += 1;
    c.series.push_back(std::move(s));
  }
  c.empty_note = "no pass after a model turn (a baseline run passes without turns)";
  return c;
}

BarChart failures_chart(const std::vector<RunReport>& runs) {
  BarChart c;
  c.id = "chart-failures";
  c.title = "Failure kinds (tasks with a result that did not pass)";
  c.x_label = "tasks";
  c.y_label = "";
  c.horizontal = true;
  std::set<std::string> kinds;
  for (const auto& r : runs)
    for (const auto& [k, n] : r.failure_kinds) kinds.insert(k);
  c.categories.assign(kinds.begin(), kinds.end());
  for (const auto& r : runs) {
    ChartSeries s{run_label(r), {}};
    for (const auto& k : c.categories) {
      auto it = r.failure_kinds.find(k);
      s.values.push_back(it == r.failure_kinds.end() ? 0.0 : it->second);
    }
    c.series.push_back(std::move(s));
  }
  c.empty_note = "no failure";
  return c;
}

}  // namespace

std::vector<std::string> speedup_bin_labels() {
  std::vector<std::string> labels;
  labels.push_back("≤" + power_of_two(kLowestBinExponent) + "×");
  for (int e = kLowestBinExponent; e < kHighestBinExponent; ++e)
    labels.push_back(power_of_two(e) + "–" + power_of_two(e + 1) + "×");
  labels.push_back(">" + power_of_two(kHighestBinExponent) + "×");
  return labels;
}

size_t speedup_bin(double speedup) {
  // Bin k (1-based) is (2^(e-1), 2^e] with e = kLowestBinExponent + k; 0 is ≤ 2^lowest.
  if (!(speedup < 1e300)) return static_cast<size_t>(kHighestBinExponent - kLowestBinExponent + 1);  // inf, NaN
  const double l = std::log2(speedup);
  const int e = static_cast<int>(std::ceil(l - 1e-12));
  if (e <= kLowestBinExponent) return 0;
  if (e > kHighestBinExponent) return static_cast<size_t>(kHighestBinExponent - kLowestBinExponent + 1);
  return static_cast<size_t>(e - kLowestBinExponent);
}

std::string run_label(const RunReport& r) {
  return r.run.model.empty() ? r.run.run_id : fmt::format("{} ({})", r.run.run_id, r.run.model);
}

std::vector<std::string> render_run_charts(const std::vector<RunReport>& runs) {
  return {render_bar_chart(pass_rate_chart(runs, true)), render_bar_chart(pass_rate_chart(runs, false)),
          render_line_chart(fast_p_chart(runs)),         render_bar_chart(speedup_chart(runs)),
          render_bar_chart(turns_chart(runs)),           render_bar_chart(failures_chart(runs))};
}

std::string render_comparison_chart(const RunComparison& c, const std::string& id) {
  BarChart b;
  b.id = id;
  b.title = "Tasks by verdict (B against A)";
  b.x_label = "tasks";
  b.horizontal = true;
  b.categories = {"gain (only B passes)",
                  "loss (only A passes)",
                  "both pass, B faster",
                  "both pass, B slower",
                  "both pass, same speed",
                  "both fail",
                  "unpaired"};
  b.series.push_back({c.run_b + " vs " + c.run_a,
                      {static_cast<double>(c.pass_rate.gains), static_cast<double>(c.pass_rate.losses),
                       static_cast<double>(c.faster), static_cast<double>(c.slower), static_cast<double>(c.same_speed),
                       static_cast<double>(c.both_fail), static_cast<double>(c.unpaired)}});
  return render_bar_chart(b);
}

}  // namespace nki_agent
