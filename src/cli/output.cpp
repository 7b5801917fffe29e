#include <cstdio>

#include "cli/cli.h"

namespace nki_agent::cli {

int report(const Context& ctx, const Diagnostic& d) {
  if (ctx.json) {
    nlohmann::json j = {{"ok", false}, {"diagnostics", nlohmann::json::array({d.to_json()})}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::fprintf(stderr, "%s\n", d.format().c_str());
  }
  return kExitUserError;
}

void emit_json(const Context& ctx, nlohmann::json result) {
  if (!ctx.json) return;
  nlohmann::json j = {{"ok", true}};
  j.update(result);
  std::printf("%s\n", j.dump(2).c_str());
}

}  // namespace nki_agent::cli
