// core/log.h — logging for nki-agent: one spdlog logger writing to stderr.
//
// Levels: trace, debug, info, warn, error, off. The level comes from init_logging() (the CLI's
// --log-level) or the NKIA_LOG environment variable; the default is "warn", so normal runs print
// only their results and diagnostics. Log lines are for operators; users see Diagnostics.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace nki_agent {

// Sets up the logger once; `level` overrides NKIA_LOG when non-empty. Returns false (and keeps the
// previous level) when the name is not a level.
bool init_logging(std::string_view level = {});
spdlog::logger& logger();

}  // namespace nki_agent

#define NKIA_LOG_DEBUG(...) ::nki_agent::logger().debug(__VA_ARGS__)
#define NKIA_LOG_INFO(...) ::nki_agent::logger().info(__VA_ARGS__)
#define NKIA_LOG_WARN(...) ::nki_agent::logger().warn(__VA_ARGS__)
#define NKIA_LOG_ERROR(...) ::nki_agent::logger().error(__VA_ARGS__)
