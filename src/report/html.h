// report/html.h — the benchmark report as ONE self-contained HTML file: inline CSS, inline SVG
// charts (report/charts.h) and a little inline script (sorting, filtering, opening a task's row);
// nothing is fetched when the page is viewed. Sections, each an element with a stable id:
//   #runs        the runs shown (id, model, date, prompt version, tasks root);
//   #summary     per run, a table (summary-<k>) of the whole run and each level, and one
//                (categories-<k>, folded) of each category:
//                tasks, broken, interrupted, compile %, pass %, fast_p, geomean speedup, tokens, cost;
//   #charts      the six charts;
//   #comparison  with two or more runs, each later run against the first (comparison-<k>):
//                wins and losses, the paired pass-rate difference with its interval, per-task verdicts;
//   #tasks       the per-task table (task-table): a row per task and run that opens on a click to
//                the failing check's message, the best kernel's source and the trajectory.
// Every string from the database is escaped (report/markup.h); the script reads the page, never
// data. The output depends only on the runs: no date or path of the machine that made it.
#pragma once

#include <string>
#include <vector>

#include "report/report.h"

namespace nki_agent {

struct HtmlOptions {
  std::string title = "NKIBench results";
};

std::string render_report_html(const std::vector<RunReport>& runs, const HtmlOptions& options = {});

}  // namespace nki_agent
