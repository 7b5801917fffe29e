// cost/trace_json.h — reads back the trace documents `nki-agent check --trace` and `run --trace`
// write (docs/check.md), so a trace recorded once can be profiled again on other targets or
// hardware descriptions without running the kernel (`nki-agent profile --from-trace`).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnostic.h"
#include "nki/trace.h"

namespace nki_agent {

// The "trace" array of a trace document (or a bare array of records). Every field is checked;
// code nkia_trace_invalid names the first bad record and field.
Result<Trace> trace_from_json(const nlohmann::json& doc);
// Reads and parses a trace document. Codes nkia_trace_unreadable, nkia_trace_invalid.
Result<Trace> load_trace_file(const std::string& path);

}  // namespace nki_agent
