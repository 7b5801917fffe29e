#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace nki_agent {

namespace {

std::shared_ptr<spdlog::logger> make_logger() {
  auto l = spdlog::stderr_color_mt("nki-agent");
  l->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  l->set_level(spdlog::level::warn);
  return l;
}

std::shared_ptr<spdlog::logger>& instance() {
  static std::shared_ptr<spdlog::logger> l = make_logger();
  return l;
}

bool parse_level(std::string_view name, spdlog::level::level_enum* out) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},  {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"warning", spdlog::level::warn}, {"error", spdlog::level::err},
      {"off", spdlog::level::off}};
  for (const auto& [n, l] : kLevels)
    if (n == name) {
      *out = l;
      return true;
    }
  return false;
}

}  // namespace

bool init_logging(std::string_view level) {
  std::string name(level);
  if (name.empty()) {
    const char* env = std::getenv("NKIA_LOG");
    if (!env) return true;
    name = env;
  }
  spdlog::level::level_enum l;
  if (!parse_level(name, &l)) return false;
  instance()->set_level(l);
  return true;
}

spdlog::logger& logger() {
  return *instance();
}

}  // namespace nki_agent
