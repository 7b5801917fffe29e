// `nki-agent report RESULTS.sqlite [--run ID]... [-o report.html] [--no-trajectories]`: benchmark
// runs as one self-contained HTML page (report/html.h); with two or more runs, each later one is
// compared with the first.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "cli/cli.h"
#include "report/html.h"
#include "report/report.h"

namespace nki_agent::cli {

namespace {

struct ReportCliOptions {
  std::string db;
  std::vector<std::string> runs;
  std::string out;
  std::string title = "NKIBench results";
  bool no_trajectories = false;
};

int run_report(const Context& ctx, const ReportCliOptions& o) {
  ReportOptions ro;
  ro.run_ids = o.runs;
  ro.trajectories = !o.no_trajectories;
  auto runs = load_run_reports(o.db, ro);
  if (!runs) return report(ctx, runs.error());
  const std::string out = !o.out.empty() ? o.out : (std::filesystem::path(o.db).parent_path() / "report.html").string();
  HtmlOptions ho;
  ho.title = o.title;
  const std::string html = render_report_html(*runs, ho);
  std::ofstream f(out, std::ios::binary);
  f << html;
  f.close();
  if (!f)
    return report(ctx, Diagnostic::error("nkia_unwritable", fmt::format("cannot write {}", out),
                                         "check the folder exists and is writable"));
  size_t rows = 0;
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& r : *runs) {
    rows += r.tasks.size();
    ids.push_back(r.run.run_id);
  }
  if (ctx.json)
    print_json({{"ok", true}, {"file", out}, {"runs", ids}, {"rows", rows}, {"bytes", html.size()}});
  else
    std::printf("report: %s (%zu run%s, %zu task rows)\n", out.c_str(), runs->size(), runs->size() == 1 ? "" : "s",
                rows);
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportCliOptions>();
  auto* sub = app.add_subcommand(
      "report", "Benchmark runs as one self-contained HTML page: summary, charts, per-task table, comparison");
  sub->add_option("db", o->db, "The results database a bench run wrote")->required();
  sub->add_option("--run", o->runs,
                  "A run to show (repeat it: each later run is compared with the first; default: the most recent)")
      ->allow_extra_args(false);
  sub->add_option("-o,--out", o->out, "The HTML file to write (default: report.html beside the database)");
  sub->add_option("--title", o->title, "The page's title")->capture_default_str();
  sub->add_flag("--no-trajectories", o->no_trajectories, "Leave the tasks' trajectories out of the page");
  sub->callback([&ctx, o] { ctx.exit_code = run_report(ctx, *o); });
}

}  // namespace nki_agent::cli
