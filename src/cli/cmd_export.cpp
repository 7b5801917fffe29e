// `nki-agent export RESULTS.sqlite [--run ID] [--format csv|kernelbench|kernelbench-baseline|pass-at-k]
// [-o FILE]`: a benchmark run's results for other tools (report/export.h).
#include <fmt/format.h>

#include <fstream>

#include "cli/cli.h"
#include "report/export.h"

namespace nki_agent::cli {

namespace {

struct ExportCliOptions {
  std::string db;
  std::string run;
  std::string format = "csv";
  std::string out;
};

int run_export(const Context& ctx, const ExportCliOptions& o) {
  auto format = export_format_from_name(o.format);
  if (!format) return report(ctx, format.error());
  auto text = export_run(o.db, o.run, *format);
  if (!text) return report(ctx, text.error());
  if (o.out.empty()) {
    std::fputs(text->c_str(), stdout);
    return kExitOk;
  }
  std::ofstream f(o.out, std::ios::binary);
  f << *text;
  f.close();
  if (!f)
    return report(ctx, Diagnostic::error("nkia_unwritable", fmt::format("cannot write {}", o.out),
                                         "check the folder exists and is writable"));
  if (ctx.json) print_json({{"ok", true}, {"file", o.out}, {"format", o.format}});
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ExportCliOptions>();
  auto* sub = app.add_subcommand(
      "export", "A benchmark run's results as CSV, in KernelBench's eval-results / baseline JSON, or its pass@k");
  sub->add_option("db", o->db, "The results database a bench run wrote")->required();
  sub->add_option("--run", o->run, "The run (default: the most recent)");
  sub->add_option("--format", o->format, "csv, kernelbench, kernelbench-baseline or pass-at-k (under bench --samples)")
      ->capture_default_str();
  sub->add_option("-o,--out", o->out, "Write to this file (default: stdout)");
  sub->callback([&ctx, o] { ctx.exit_code = run_export(ctx, *o); });
}

}  // namespace nki_agent::cli
