// core/diagnostic.h — the one shape every user-facing failure takes.
//
// A Diagnostic is what a kernel author, a benchmark user or an LLM sees when something they gave
// us is wrong: a stable code (NKI's `err_*` catalogue names where one applies, else our own
// `nkia_*` names), a severity, a plain message, where it happened (file:line:col), and a hint that
// says how to fix it. The CLI prints it like a compiler; tools return its JSON form.
//
// Every code is registered in the error table (nki/error_catalogue.h, `nki-agent errors`).
//
// Internal bugs are not Diagnostics: they are InternalError exceptions or failed assertions. Where one
// must still be reported as a result (an exception that escaped the NKI core inside a kernel run), it
// carries the code nkia_internal, and the CLI exits with 3 for it instead of 1.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

namespace nki_agent {

enum class Severity : uint8_t { kNote, kWarning, kError };
std::string_view severity_name(Severity s);

struct SourceLoc {
  std::string file;  // empty when unknown
  int line = 0;      // 1-based; 0 when unknown
  int col = 0;       // 1-based; 0 when unknown

  bool known() const { return !file.empty() || line > 0; }
};

struct Diagnostic {
  std::string code;  // stable identifier, e.g. "err_unsupported_memory", "nkia_npy_bad_header"
  Severity severity = Severity::kError;
  std::string message;
  SourceLoc loc;
  std::string hint;                // how to fix it; may be empty
  std::vector<std::string> notes;  // extra lines (e.g. traceback frames inside the kernel)

  static Diagnostic error(std::string code, std::string message, std::string hint = {});
  Diagnostic& at(SourceLoc where);
  Diagnostic& with_note(std::string note);

  // "file:line:col: error[code]: message" then "  hint: ..." and note lines, like a compiler.
  std::string format() const;
  nlohmann::json to_json() const;
  // Reads the JSON form back; unknown or missing fields take their defaults.
  static Diagnostic from_json(const nlohmann::json& j);
};

// The code of a bug in nki-agent met while serving a request: never the user's fault.
inline constexpr std::string_view kInternalErrorCode = "nkia_internal";
// Whether `d` reports a bug in nki-agent (nkia_internal, or nkia_internal_python: the kernel host's
// own Python failed) rather than a problem with what the user gave.
bool is_internal(const Diagnostic& d);
// Whether `d` is nki-agent's failure or its machine's rather than the kernel's or the user's: an
// internal error, a kernel worker that cannot start, speak or survive (nkia_worker_*), or a sandbox
// that cannot be set up. Commands exit with 3 for these, and verify reports them as its own error
// instead of failing the kernel.
bool is_infrastructure_failure(const Diagnostic& d);

// The warnings of one run, as the user sees them: each distinct warning (code, file and line) once,
// with how often it was raised, and at most kMaxWarnings of them.
inline constexpr size_t kMaxWarnings = 64;

class WarningList {
 public:
  // Adds `d`, raised `count` times; one already here with its code and location is counted instead.
  // Past kMaxWarnings distinct ones, new ones are only counted as left out.
  void add(Diagnostic d, int64_t count = 1);
  // Moves every warning of `other` in, with its count.
  void merge(WarningList&& other);
  bool empty() const { return items_.empty() && left_out_ == 0; }
  size_t size() const { return items_.size(); }
  // The warnings, in the order first raised; one raised more than once says so at the end of its
  // message ("(raised 5 times)"), and when some were left out the last one carries a note saying so.
  // The list is empty afterwards.
  std::vector<Diagnostic> take();

 private:
  std::vector<Diagnostic> items_;
  std::vector<int64_t> counts_;
  int64_t left_out_ = 0;  // distinct warnings past the cap
};

// The result type of anything that can fail because of its input.
template <typename T>
using Result = tl::expected<T, Diagnostic>;

inline tl::unexpected<Diagnostic> fail(Diagnostic d) {
  return tl::unexpected<Diagnostic>(std::move(d));
}
inline tl::unexpected<Diagnostic> fail(std::string code, std::string message, std::string hint = {}) {
  return tl::unexpected<Diagnostic>(Diagnostic::error(std::move(code), std::move(message), std::move(hint)));
}

// A broken invariant inside nki-agent itself (a simulator bug, never a kernel bug).
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_fail(const char* file, int line, const std::string& what);

#define NKIA_ASSERT(cond)                                                                    \
  do {                                                                                       \
    if (!(cond)) ::nki_agent::internal_fail(__FILE__, __LINE__, "assertion failed: " #cond); \
  } while (0)

}  // namespace nki_agent
