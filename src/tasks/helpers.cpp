// The embedded Python helpers and their interpreter (tasks/helpers.h).
#include "tasks/helpers.h"

#include <cstdlib>

#include "core/diagnostic.h"

namespace nki_agent {

// Debian's interpreter, the one with python3-torch and python3-numpy: the build's NKIA_PYTHON.
constexpr const char* kDefaultHelperPython = NKIA_HELPER_PYTHON;

std::string_view helper_source(std::string_view name) {
  for (const auto& h : embedded_helpers())
    if (h.name == name) return h.source;
  NKIA_ASSERT(!"unknown embedded helper");
  return {};
}

std::string helper_python(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("NKIA_REFERENCE_PYTHON"); env && *env) return env;
  return kDefaultHelperPython;
}

std::vector<std::string> helper_argv(const std::string& python, std::string_view name) {
  return {python, "-I", "-c", std::string(helper_source(name))};
}

}  // namespace nki_agent
