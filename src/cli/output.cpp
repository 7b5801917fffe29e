#include <cstdio>

#include "cli/cli.h"

namespace nki_agent::cli {

void print_json(const nlohmann::json& j) {
  // Text that is not UTF-8 (a file name, say) is shown with U+FFFD instead of failing the output.
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

int report(const Context& ctx, const Diagnostic& d) {
  if (ctx.json) {
    nlohmann::json j = {{"ok", false}, {"diagnostics", nlohmann::json::array({d.to_json()})}};
    print_json(j);
  } else {
    std::fprintf(stderr, "%s\n", d.format().c_str());
  }
  return is_infrastructure_failure(d) ? kExitInternal : kExitUserError;
}

void emit_json(const Context& ctx, nlohmann::json result) {
  if (!ctx.json) return;
  nlohmann::json j = {{"ok", true}};
  j.update(result);
  print_json(j);
}

void print_warnings(const Context& ctx, const std::vector<Diagnostic>& warnings) {
  if (ctx.json || warnings.empty()) return;
  std::fflush(stdout);  // after what was printed before them
  for (const Diagnostic& w : warnings) std::fprintf(stderr, "%s\n", w.format().c_str());
}

nlohmann::json warnings_json(const std::vector<Diagnostic>& warnings) {
  nlohmann::json a = nlohmann::json::array();
  for (const Diagnostic& w : warnings) a.push_back(w.to_json());
  return a;
}

}  // namespace nki_agent::cli
