// What `nki-agent run` and `nki-agent check` share: parsing --grid and name=value flags, the
// sandbox limits of a kernel run, and writing a run's trace as JSON.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "cli/cli.h"
#include "nki/trace.h"

namespace nki_agent::cli {

Result<std::vector<int64_t>> parse_grid(const std::string& text) {
  std::vector<int64_t> grid;
  if (text.empty()) return grid;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string tok = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end != '\0' || v < 1 || v > 65536)
      return fail("nkia_bad_grid", fmt::format("bad --grid '{}': '{}' is not a grid size", text, tok),
                  "give positive sizes separated by commas, e.g. --grid 2,2");
    grid.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return grid;
}

Result<std::pair<std::string, std::string>> split_pair(const std::string& text, const char* flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return fail("nkia_bad_argument", fmt::format("bad {} '{}': expected name=value", flag, text),
                fmt::format("write {} name=value", flag));
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

SandboxLimits kernel_limits(double seconds, int64_t memory_mib, bool with_trace) {
  SandboxLimits limits;
  limits.wall_seconds = seconds;
  limits.cpu_seconds = seconds;
  limits.address_space_bytes = memory_mib << 20;
  // A trace adds to the reply: up to about a hundred bytes per instruction.
  if (with_trace) limits.max_output_bytes = kMaxOutputBytesCeiling;
  return limits;
}

nlohmann::json trace_document(const nlohmann::json& about, const Trace& trace) {
  nlohmann::json doc = about;
  doc["summary"] = summary_to_json(summarize(trace));
  doc["trace"] = trace.to_json();
  return doc;
}

Result<void> write_trace_file(const std::string& path, const nlohmann::json& about, const Trace& trace) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return fail("nkia_unwritable", fmt::format("cannot write the trace to {}", path), "check the folder exists");
  // The run's facts and summary first, then one record per line: large traces stay greppable.
  nlohmann::json head = about;
  head["summary"] = summary_to_json(summarize(trace));
  // A kernel path that is not UTF-8 is written with U+FFFD rather than failing the trace.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  std::string text = head.dump(-1, ' ', false, kReplace);
  text.pop_back();  // the closing brace
  f << text << ",\"trace\":[";
  const nlohmann::json records = trace.to_json();
  for (size_t i = 0; i < records.size(); ++i) f << (i ? ",\n" : "\n") << records[i].dump(-1, ' ', false, kReplace);
  f << "\n]}\n";
  f.close();
  if (!f) return fail("nkia_unwritable", fmt::format("cannot write the trace to {}", path), "check the disk has room");
  return {};
}

}  // namespace nki_agent::cli
