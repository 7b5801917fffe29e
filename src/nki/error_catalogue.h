// nki/error_catalogue.h — every code a kernel Diagnostic can carry: what it means and how to fix it.
//
// One table (nki/error_table.cpp) is the single source of truth for these codes. The NKI semantics
// core raises Diagnostics through make_error(), which takes the hint and severity from the table;
// `nki-agent errors` prints it; docs/errors.md is its generated Markdown form
// (`nki-agent errors --markdown`); the agent's lookup tool reads it.
//
// Three groups (ErrorOrigin):
//   kCatalogue   the NKI compiler's own codes (`err_*`, nki-spec §5.1): the 36 codes of SDK 2.21–2.26
//                plus err_read_modify_write_on_kernel_parameter, which existed only in SDK 2.20.
//   kConstraint  our `nkia_*` codes for the hardware and language rules of nki-spec §5.3 that no
//                catalogue code covers. Where a catalogue code fits, the rule uses it instead:
//                  an operand in the wrong memory                 → err_unsupported_memory
//                  more than 128 partitions (incl. matmul K)      → err_num_partition_exceed_arch_limit
//                  operands with different partition counts       → err_num_partition_mismatch
//                  a fixed upper limit on one axis or free size   → err_size_of_dimension_exceed_arch_limit
//                    (matmul stationary ≤128 / moving ≤512, transposes, bn_stats, max8, …; the message
//                    names the API and the limit)
//                  too many axes for an API or access pattern     → err_exceed_max_supported_dimension
//                  two affine_range iterations write one address  → err_unexpected_output_dependencies
//   kSimulator   `nkia_*` codes for what only executing the kernel reveals (uninitialised reads,
//                runtime index out of bounds, …). Most are warnings.
//
// Codes are stable: never rename or reuse one; add new ones in sorted order (a static_assert in the
// table enforces sorted, unique, well-formed codes). Codes for problems outside a kernel's semantics
// (CLI usage, .npy files, the sandbox) are not listed here.
//
// This module holds no state and does no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnostic.h"

namespace nki_agent {

enum class ErrorOrigin : uint8_t { kCatalogue, kConstraint, kSimulator };

// "catalogue", "constraint", "simulator".
std::string_view error_origin_name(ErrorOrigin o);

struct ErrorInfo {
  std::string_view code = {};  // "err_…" (catalogue) or "nkia_…" (ours)
  ErrorOrigin origin = ErrorOrigin::kConstraint;
  Severity severity = Severity::kError;  // the default severity of a Diagnostic with this code
  std::string_view title = {};           // one line, no final period
  std::string_view meaning = {};         // 2–4 sentences in plain words
  std::string_view hint = {};            // what to change in the kernel, imperative
  std::string_view example_bad = {};     // a few lines of legacy-dialect NKI; may be empty
  std::string_view example_fix = {};     // the same lines, fixed; empty iff example_bad is
  std::string_view note = {};            // versions, targets, older names; may be empty
  std::string_view spec = {};            // where nki-spec.md states it, e.g. "§5.1 #23; §2.3 TC#1"
};

// The whole table, sorted by code.
std::span<const ErrorInfo> error_catalogue();

// The entry for a code, or nullptr when there is none.
const ErrorInfo* find_error(std::string_view code);

// Up to max_results codes that look like `query` (case-insensitive): codes containing it first, then
// the nearest by edit distance; nothing when no code is close. For "did you mean" hints.
std::vector<std::string_view> similar_error_codes(std::string_view query, size_t max_results = 5);

// A Diagnostic with this code, the message, and the table's hint and severity. The code must be in
// the table: our own code writes the codes, so an unknown one is an InternalError.
Diagnostic make_error(std::string_view code, std::string message);

// {"code", "origin", "severity", "title", "meaning", "hint", "spec"} plus "example_bad",
// "example_fix" and "note" when present.
nlohmann::json error_info_json(const ErrorInfo& e);

// One entry as a Markdown section ("### `code`" …), and the whole table as the docs page
// (docs/errors.md is exactly errors_markdown()).
std::string error_entry_markdown(const ErrorInfo& e);
std::string errors_markdown();

}  // namespace nki_agent
