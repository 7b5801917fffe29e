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

void internal_fail(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("internal error at {}:{}: {}", file, line, what));
}

}  // namespace nki_agent
