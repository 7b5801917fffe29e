// corpus/report.h — `nki-agent corpus report DIR`: what a generated corpus holds, read from its
// corpus.jsonl and corpus_summary.json: the op, category, level, dtype and structure histograms,
// the filter funnel (candidates -> kept at each stage), the distribution of similarity to the
// nearest NKIBench task and the closest tasks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostic.h"

namespace nki_agent::corpus {

// Codes: nkia_task_not_found (no corpus.jsonl in dir), nkia_task_invalid (a line is not JSON).
Result<nlohmann::json> corpus_report(const std::string& dir);
// The report as text (Markdown tables, for docs/corpus.md too).
std::string format_corpus_report(const nlohmann::json& report);

}  // namespace nki_agent::corpus
