#include "core/diagnostic.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace nki_agent {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kNote: return "note";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

static Severity severity_from_name(std::string_view s) {
  if (s == "note") return Severity::kNote;
  if (s == "warning") return Severity::kWarning;
  return Severity::kError;
}

bool is_internal(const Diagnostic& d) {
  return d.code == kInternalErrorCode || d.code == "nkia_internal_python";
}

bool is_infrastructure_failure(const Diagnostic& d) {
  return is_internal(d) || d.code.rfind("nkia_worker_", 0) == 0 || d.code == "nkia_sandbox_setup" ||
         d.code == "nkia_sandbox_bad_limits";
}

Diagnostic Diagnostic::error(std::string code, std::string message, std::string hint) {
  Diagnostic d;
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

Diagnostic& Diagnostic::at(SourceLoc where) {
  loc = std::move(where);
  return *this;
}

Diagnostic& Diagnostic::with_note(std::string note) {
  notes.push_back(std::move(note));
  return *this;
}

std::string Diagnostic::format() const {
  std::string out;
  if (loc.known()) {
    out += loc.file.empty() ? std::string("<unknown>") : loc.file;
    if (loc.line > 0) out += fmt::format(":{}", loc.line);
    if (loc.line > 0 && loc.col > 0) out += fmt::format(":{}", loc.col);
    out += ": ";
  }
  out += fmt::format("{}[{}]: {}", severity_name(severity), code, message);
  if (!hint.empty()) out += fmt::format("\n  hint: {}", hint);
  for (const auto& n : notes) out += fmt::format("\n  note: {}", n);
  return out;
}

nlohmann::json Diagnostic::to_json() const {
  nlohmann::json j = {{"code", code}, {"severity", severity_name(severity)}, {"message", message}};
  if (loc.known()) j["location"] = {{"file", loc.file}, {"line", loc.line}, {"col", loc.col}};
  if (!hint.empty()) j["hint"] = hint;
  if (!notes.empty()) j["notes"] = notes;
  return j;
}

namespace {

// Field readers that take a wrong-typed or missing field as its default instead of throwing.
std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int int_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

}  // namespace

Diagnostic Diagnostic::from_json(const nlohmann::json& j) {
  Diagnostic d;
  if (!j.is_object()) return d;
  d.code = str_field(j, "code");
  d.severity = severity_from_name(str_field(j, "severity"));
  d.message = str_field(j, "message");
  d.hint = str_field(j, "hint");
  if (auto it = j.find("location"); it != j.end() && it->is_object()) {
    d.loc.file = str_field(*it, "file");
    d.loc.line = int_field(*it, "line");
    d.loc.col = int_field(*it, "col");
  }
  if (auto it = j.find("notes"); it != j.end() && it->is_array()) {
    for (const auto& n : *it)
      if (n.is_string()) d.notes.push_back(n.get<std::string>());
  }
  return d;
}

void WarningList::add(Diagnostic d, int64_t count) {
  for (size_t i = 0; i < items_.size(); ++i) {
    const Diagnostic& w = items_[i];
    if (w.code == d.code && w.loc.file == d.loc.file && w.loc.line == d.loc.line) {
      counts_[i] += count;
      return;
    }
  }
  if (items_.size() >= kMaxWarnings) {
    ++left_out_;
    return;
  }
  items_.push_back(std::move(d));
  counts_.push_back(count);
}

void WarningList::merge(WarningList&& other) {
  for (size_t i = 0; i < other.items_.size(); ++i) add(std::move(other.items_[i]), other.counts_[i]);
  left_out_ += other.left_out_;
  other.items_.clear();
  other.counts_.clear();
  other.left_out_ = 0;
}

std::vector<Diagnostic> WarningList::take() {
  std::vector<Diagnostic> out = std::move(items_);
  for (size_t i = 0; i < out.size(); ++i)
    if (counts_[i] > 1) out[i].message += fmt::format(" (raised {} times)", counts_[i]);
  if (left_out_ > 0 && !out.empty())
    out.back().with_note(fmt::format("{} more distinct warning{} left out (at most {} are kept)", left_out_,
                                     left_out_ == 1 ? " was" : "s were", kMaxWarnings));
  items_.clear();
  counts_.clear();
  left_out_ = 0;
  return out;
}

void internal_fail(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("internal error at {}:{}: {}", file, line, what));
}

}  // namespace nki_agent
