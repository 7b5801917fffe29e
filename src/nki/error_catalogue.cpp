// nki/error_catalogue.cpp — the error table merged from its parts (nki/error_table.h), lookups over
// it, the constructor of kernel Diagnostics, and the table's JSON and Markdown forms.
#include "nki/error_catalogue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "nki/error_table.h"

namespace nki_agent {

std::string_view error_origin_name(ErrorOrigin o) {
  switch (o) {
    case ErrorOrigin::kCatalogue: return "catalogue";
    case ErrorOrigin::kConstraint: return "constraint";
    case ErrorOrigin::kSimulator: return "simulator";
    case ErrorOrigin::kRuntime: return "runtime";
    case ErrorOrigin::kVerify: return "verify";
    case ErrorOrigin::kSandbox: return "sandbox";
    case ErrorOrigin::kTask: return "task";
    case ErrorOrigin::kTool: return "tool";
    case ErrorOrigin::kAgent: return "agent";
  }
  return "constraint";
}

std::optional<ErrorOrigin> error_origin_from_name(std::string_view name) {
  for (ErrorOrigin o : kErrorOrigins)
    if (error_origin_name(o) == name) return o;
  return std::nullopt;
}

std::span<const ErrorInfo> error_catalogue() {
  static const std::vector<ErrorInfo> kTable = [] {
    std::vector<ErrorInfo> all;
    for (auto part : {error_table::catalogue_part(), error_table::constraint_part(), error_table::run_part(),
                      error_table::host_part()})
      all.insert(all.end(), part.begin(), part.end());
    std::sort(all.begin(), all.end(), [](const ErrorInfo& a, const ErrorInfo& b) { return a.code < b.code; });
    for (size_t i = 1; i < all.size(); ++i)
      if (all[i - 1].code == all[i].code)
        internal_fail(__FILE__, __LINE__, fmt::format("error table: '{}' is in two parts", all[i].code));
    return all;
  }();
  return kTable;
}

const ErrorInfo* find_error(std::string_view code) {
  auto table = error_catalogue();
  auto it = std::lower_bound(table.begin(), table.end(), code,
                             [](const ErrorInfo& e, std::string_view c) { return e.code < c; });
  return it != table.end() && it->code == code ? &*it : nullptr;
}

namespace {

// Levenshtein distance with one rolling row.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string_view> similar_error_codes(std::string_view query, size_t max_results) {
  // A substring of at least this many characters is a match; shorter ones match nearly everything.
  constexpr size_t kMinSubstring = 3;
  const std::string q = to_lower(query);
  // Edit distances above a third of the query (at least 3) suggest unrelated codes.
  const size_t max_distance = std::max<size_t>(3, q.size() / 3);
  struct Candidate {
    bool substring;
    size_t score;  // code length for substring matches (shorter is closer), else edit distance
    std::string_view code;
  };
  std::vector<Candidate> found;
  for (const ErrorInfo& e : error_catalogue()) {
    if (q.size() >= kMinSubstring && e.code.find(q) != std::string_view::npos) {
      found.push_back({true, e.code.size(), e.code});
      continue;
    }
    const size_t d = edit_distance(q, e.code);
    if (d <= max_distance) found.push_back({false, d, e.code});
  }
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.substring != b.substring) return a.substring;
    if (a.score != b.score) return a.score < b.score;
    return a.code < b.code;
  });
  std::vector<std::string_view> out;
  for (size_t i = 0; i < found.size() && i < max_results; ++i) out.push_back(found[i].code);
  return out;
}

namespace {

const ErrorInfo& registered(std::string_view code) {
  const ErrorInfo* e = find_error(code);
  if (!e) internal_fail(__FILE__, __LINE__, fmt::format("nki_error: '{}' is not in the error table", code));
  return *e;
}

}  // namespace

Diagnostic nki_error(std::string_view code, std::string message) {
  const ErrorInfo& e = registered(code);
  return nki_error(code, std::move(message), std::string(e.hint));
}

Diagnostic nki_error(std::string_view code, std::string message, std::string hint) {
  const ErrorInfo& e = registered(code);
  Diagnostic d = Diagnostic::error(std::string(e.code), std::move(message), std::move(hint));
  d.severity = e.severity;
  return d;
}

nlohmann::json error_info_json(const ErrorInfo& e) {
  nlohmann::json j = {{"code", e.code},
                      {"origin", error_origin_name(e.origin)},
                      {"severity", severity_name(e.severity)},
                      {"title", e.title},
                      {"meaning", e.meaning},
                      {"hint", e.hint}};
  if (!e.spec.empty()) j["spec"] = e.spec;
  if (!e.not_raised.empty()) j["not_raised"] = e.not_raised;
  if (!e.example_bad.empty()) j["example_bad"] = e.example_bad;
  if (!e.example_fix.empty()) j["example_fix"] = e.example_fix;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

namespace {

struct Group {
  ErrorOrigin origin;
  std::string_view heading;
  std::string_view intro;
};

constexpr Group kGroups[] = {
    {ErrorOrigin::kCatalogue, "NKI compiler catalogue",
     "The codes of the NKI compiler's own error catalogue (legacy frontend, `nki.errors`, SDK 2.20–2.26). "
     "nki-agent raises each of them for the mistakes the real compiler reports with it."},
    {ErrorOrigin::kConstraint, "nki-agent constraint checks",
     "Hardware and language rules that the catalogue has no code for. The real compiler reports most of "
     "them with free-form messages (or not at all, leaving wrong results); nki-agent gives each one a "
     "stable code."},
    {ErrorOrigin::kSimulator, "nki-agent simulator checks",
     "What only running the kernel reveals. Most are warnings: the kernel runs, but the result on hardware "
     "may differ from the simulator's."},
    {ErrorOrigin::kRuntime, "Running the kernel's Python",
     "How the kernel's Python code ran: syntax errors, exceptions, the entry function and its inputs, "
     "imports. `nkia_internal` is the one code that is never the kernel's fault: a bug in nki-agent, "
     "reported with exit code 3."},
    {ErrorOrigin::kVerify, "Verification and the static policy",
     "`nki-agent verify` runs a kernel on a task's shape sets and compares its outputs with the task's "
     "reference (`nkia_verify_<check>`); before that the static policy reads the kernel's source "
     "(`nkia_policy_<rule>`)."},
    {ErrorOrigin::kSandbox, "The sandbox and the kernel workers",
     "Kernels run in sandboxed worker processes with limits on time, memory and output. These codes say "
     "which limit a kernel hit, or that the machinery around it failed (not the kernel's fault)."},
    {ErrorOrigin::kTask, "Tasks and references",
     "Task folders (`task.toml`, `task.py`), the PyTorch reference that a task computes, and the "
     "reference cache."},
    {ErrorOrigin::kTool, "Command-line tools and files",
     "Arguments of the `nki-agent` commands, `.npy` files, kernel files, hardware descriptions and trace "
     "files."},
    {ErrorOrigin::kAgent, "The agent",
     "The LLM endpoints the agent calls, its prompts, trajectories, fine-tuning data and results store."},
};

std::string escape_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// GitHub's heading anchor: lower case, spaces to dashes, punctuation other than - and _ dropped.
std::string anchor(std::string_view heading) {
  std::string out;
  for (char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_')
      out += static_cast<char>(std::tolower(u));
    else if (c == ' ')
      out += '-';
  }
  return out;
}

size_t count_of(ErrorOrigin o) {
  auto table = error_catalogue();
  return static_cast<size_t>(
      std::count_if(table.begin(), table.end(), [o](const ErrorInfo& e) { return e.origin == o; }));
}

}  // namespace

std::string_view error_origin_heading(ErrorOrigin o) {
  for (const Group& g : kGroups)
    if (g.origin == o) return g.heading;
  return error_origin_name(o);
}

std::string error_entry_markdown(const ErrorInfo& e) {
  std::string out = fmt::format("### `{}`\n\n**{}**", e.code, e.title);
  if (e.severity != Severity::kError) out += fmt::format(" ({} by default)", severity_name(e.severity));
  out += fmt::format("\n\n{}\n\n**Fix:** {}\n", e.meaning, e.hint);
  if (!e.example_bad.empty())
    out +=
        fmt::format("\nWrong:\n\n```python\n{}\n```\n\nFixed:\n\n```python\n{}\n```\n", e.example_bad, e.example_fix);
  if (!e.note.empty()) out += fmt::format("\n*Note:* {}\n", e.note);
  if (!e.not_raised.empty()) out += fmt::format("\n*Not raised yet:* {}\n", e.not_raised);
  if (!e.spec.empty()) out += fmt::format("\n*Spec:* nki-spec {}\n", e.spec);
  return out;
}

std::string errors_markdown() {
  std::string out =
      "# NKI error codes\n\n"
      "<!-- Generated from src/nki/error_table_*.cpp by `nki-agent errors --markdown > docs/errors.md`. "
      "Do not edit by hand. -->\n\n"
      "Every problem nki-agent reports is a Diagnostic with one of these codes, a message, where it "
      "happened (for a kernel, its `file:line`) and a fix hint. Look a code up with `nki-agent errors CODE` "
      "(add `--json` for the structured form); `nki-agent errors` lists them all, `--origin NAME` one "
      "group.\n\n"
      "Examples are in the legacy dialect (`import neuronxcc.nki.language as nl`, `neuronxcc.nki.isa as nisa`, "
      "`neuronxcc.nki.typing as nt`) and show only the lines that matter: `x` and `out` are HBM tensors, `t` is "
      "an SBUF tile, `i_p = nl.arange(128)[:, None]` and `i_f = nl.arange(F)[None, :]`.\n\n"
      "| Group | Codes | Prefix |\n|---|---|---|\n";
  for (const Group& g : kGroups)
    out += fmt::format("| [{}](#{}) | {} | `{}` |\n", g.heading, anchor(g.heading), count_of(g.origin),
                       g.origin == ErrorOrigin::kCatalogue ? "err_*" : "nkia_*");
  auto table = error_catalogue();
  for (const Group& g : kGroups) {
    out += fmt::format("\n## {}\n\n{}\n\n| Code | Title |\n|---|---|\n", g.heading, g.intro);
    for (const ErrorInfo& e : table)
      if (e.origin == g.origin) out += fmt::format("| [`{}`](#{}) | {} |\n", e.code, e.code, escape_cell(e.title));
    for (const ErrorInfo& e : table)
      if (e.origin == g.origin) out += "\n" + error_entry_markdown(e);
  }
  return out;
}

}  // namespace nki_agent
