// `nki-agent errors [CODE] [--origin NAME] [--markdown]`: every Diagnostic code
// (nki/error_catalogue.h), listed by group (one group with --origin), one entry in full, or the
// whole table as the Markdown docs page (docs/errors.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "cli/cli.h"
#include "nki/error_catalogue.h"

namespace nki_agent::cli {

namespace {

struct ErrorsOptions {
  std::string code;
  std::string origin;  // empty: every group
  bool markdown = false;
};

// Prints a multi-line snippet indented by four spaces.
void print_indented(std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    fmt::print("    {}\n", text.substr(start, end - start));
    start = end + 1;
  }
}

int run_list(const Context& ctx, std::optional<ErrorOrigin> only) {
  auto table = error_catalogue();
  if (ctx.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ErrorInfo& e : table)
      if (!only || e.origin == *only)
        rows.push_back({{"code", e.code},
                        {"origin", error_origin_name(e.origin)},
                        {"severity", severity_name(e.severity)},
                        {"title", e.title}});
    emit_json(ctx, {{"errors", rows}});
    return kExitOk;
  }
  size_t width = 0;
  for (const ErrorInfo& e : table) width = std::max(width, e.code.size());
  bool first = true;
  for (ErrorOrigin o : kErrorOrigins) {
    if (only && o != *only) continue;
    size_t n = 0;
    for (const ErrorInfo& e : table) n += e.origin == o ? 1 : 0;
    fmt::print("{}{} ({})\n", first ? "" : "\n", error_origin_heading(o), n);
    first = false;
    for (const ErrorInfo& e : table)
      if (e.origin == o)
        fmt::print("  {:<{}}  {}{}\n", e.code, width, e.title,
                   e.severity == Severity::kError ? "" : fmt::format(" [{}]", severity_name(e.severity)));
  }
  std::vector<std::string_view> names;
  for (ErrorOrigin o : kErrorOrigins) names.push_back(error_origin_name(o));
  fmt::print(
      "\nRun 'nki-agent errors CODE' for what a code means and how to fix it, 'nki-agent errors --origin "
      "NAME' for one group ({}).\n",
      fmt::join(names, ", "));
  return kExitOk;
}

void print_entry(const ErrorInfo& e) {
  fmt::print("{}: {}\n", e.code, e.title);
  fmt::print("  group: {}   severity: {}{}\n", error_origin_heading(e.origin), severity_name(e.severity),
             e.spec.empty() ? "" : fmt::format("   spec: nki-spec {}", e.spec));
  fmt::print("\n{}\n\nFix: {}\n", e.meaning, e.hint);
  if (!e.example_bad.empty()) {
    fmt::print("\nWrong:\n");
    print_indented(e.example_bad);
    fmt::print("Fixed:\n");
    print_indented(e.example_fix);
  }
  if (!e.note.empty()) fmt::print("\nNote: {}\n", e.note);
  if (!e.not_raised.empty()) fmt::print("\nNot raised yet: {}\n", e.not_raised);
}

int run_errors(const Context& ctx, const ErrorsOptions& o) {
  std::optional<ErrorOrigin> only;
  if (!o.origin.empty()) {
    only = error_origin_from_name(o.origin);
    if (!only) {
      std::vector<std::string_view> names;
      for (ErrorOrigin g : kErrorOrigins) names.push_back(error_origin_name(g));
      return report(ctx, Diagnostic::error("nkia_bad_argument", fmt::format("unknown origin '{}'", o.origin),
                                           fmt::format("use one of: {}", fmt::join(names, ", "))));
    }
  }
  if (o.code.empty()) {
    if (!o.markdown) return run_list(ctx, only);
    const std::string md = errors_markdown();
    if (ctx.json)
      emit_json(ctx, {{"markdown", md}});
    else
      fmt::print("{}", md);
    return kExitOk;
  }
  const ErrorInfo* e = find_error(o.code);
  if (!e) {
    auto near = similar_error_codes(o.code, 3);
    std::string hint = "'nki-agent errors' lists every code";
    if (!near.empty()) hint = fmt::format("did you mean {}? {}", fmt::join(near, ", "), hint);
    return report(ctx, Diagnostic::error("nkia_unknown_error_code", fmt::format("unknown error code '{}'", o.code),
                                         std::move(hint)));
  }
  if (ctx.json) {
    nlohmann::json j = {{"error", error_info_json(*e)}};
    if (o.markdown) j["markdown"] = error_entry_markdown(*e);
    emit_json(ctx, j);
  } else if (o.markdown) {
    fmt::print("{}", error_entry_markdown(*e));
  } else {
    print_entry(*e);
  }
  return kExitOk;
}

}  // namespace

void add_errors_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ErrorsOptions>();
  auto* sub = app.add_subcommand("errors", "Explain the codes of nki-agent's diagnostics, with fixes");
  sub->add_option("code", opts->code, "One code to explain, e.g. err_unsupported_memory (default: list them all)");
  sub->add_option("--origin", opts->origin,
                  "List one group: catalogue, constraint, simulator, runtime, verify, sandbox, task, tool, agent");
  sub->add_flag("--markdown", opts->markdown, "Print Markdown: the whole table as docs/errors.md, or one entry");
  // Also accepted after the subcommand name, like the global flag before it.
  sub->add_flag("--json", ctx.json, "Print one JSON object on stdout instead of text");
  sub->callback([&ctx, opts] { ctx.exit_code = run_errors(ctx, *opts); });
}

}  // namespace nki_agent::cli
