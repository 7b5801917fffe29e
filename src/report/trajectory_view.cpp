// report/trajectory_view.cpp — JSON Lines events to condensed, bounded text.
#include "report/trajectory_view.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace nki_agent {

namespace {

using nlohmann::json;

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return {};
  return v.dump(2, ' ', false, json::error_handler_t::replace);
}

// The text of obj[key]: "" when obj is no object or has no such field (the file is not trusted).
std::string field(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it == obj.end() ? std::string() : text_of(*it);
}

bool flag(const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

json member(const json& obj, const char* key) {
  if (!obj.is_object()) return json();
  auto it = obj.find(key);
  return it == obj.end() ? json() : *it;
}

std::string cut(std::string s, size_t limit) {
  if (s.size() <= limit) return s;
  const size_t total = s.size();
  s.resize(limit);
  // Never end inside a UTF-8 sequence.
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
  return s + fmt::format("\n… ({} more characters)", total - s.size());
}

// The events one trajectory line becomes.
std::vector<TrajectoryEvent> events_of(const json& ev) {
  std::vector<TrajectoryEvent> out;
  const std::string type = field(ev, "type");
  const int turn = ev.contains("turn") && ev["turn"].is_number_integer() ? ev["turn"].get<int>() : 0;
  if (type == "start") {
    out.push_back({"prompt", 0, fmt::format("start: {} (prompt {})", field(ev, "model"), field(ev, "prompt_version")),
                   field(ev, "user"), false});
  } else if (type == "model_call") {
    if (ev.contains("error")) {
      const json& e = ev["error"];
      out.push_back({"model_error", turn, fmt::format("turn {}: model call failed", turn),
                     e.is_object() ? field(e, "message") : text_of(e), true});
      return out;
    }
    const json m = member(ev, "message");
    out.push_back(
        {"assistant", turn, fmt::format("turn {}: {} replied", turn, field(ev, "model")), field(m, "text"), false});
    if (m.is_object() && m.contains("tool_calls") && m["tool_calls"].is_array())
      for (const auto& c : m["tool_calls"]) {
        if (!c.is_object()) continue;
        std::string args = field(c, "arguments");
        // Arguments are a JSON string: show them parsed, so a kernel's newlines read as lines.
        if (auto parsed = json::parse(args, nullptr, false); parsed.is_object()) {
          std::string shown;
          for (const auto& [k, v] : parsed.items()) shown += k + ": " + text_of(v) + "\n";
          args = shown;
        }
        out.push_back({"tool_call", turn, fmt::format("turn {}: calls {}", turn, field(c, "name")), args, false});
      }
  } else if (type == "tool") {
    const bool err = flag(ev, "is_error");
    out.push_back({"tool_result", turn,
                   fmt::format("turn {}: {} result{}", turn, field(ev, "name"), err ? " (error)" : ""),
                   field(ev, "content"), err});
  } else if (type == "message") {
    out.push_back({"user", turn, fmt::format("turn {}: feedback", turn), field(ev, "text"), false});
  } else if (type == "escalate") {
    out.push_back({"escalate", turn, fmt::format("escalates to {}", field(ev, "to")), std::string(), false});
  } else if (type == "end") {
    const json r = member(ev, "result");
    out.push_back({"end", turn, fmt::format("end: {}", field(r, "status")), field(r, "error"), false});
  }
  return out;
}

// A tool line's failure, when it reports one.
void note_failure(const json& ev, TrajectoryView& v) {
  if (field(ev, "type") != "tool") return;
  const json data = member(ev, "result");
  if (!data.is_object()) return;
  const json diag = member(data, "diagnostic");
  const std::string check = data.contains("check") && data["check"].is_string() ? data["check"].get<std::string>() : "";
  if (!check.empty()) {
    v.last_check = check;
    v.last_code = field(diag, "code");
    v.last_message = field(data, "message");
  } else if (data.contains("compiled") && data["compiled"].is_boolean() && !data["compiled"].get<bool>() &&
             diag.is_object()) {
    v.last_check.clear();
    v.last_code = field(diag, "code");
    v.last_message = field(diag, "message");
  } else if (data.contains("verifier_error")) {
    const json e = member(data, "verifier_error");
    v.last_check.clear();
    v.last_code = field(e, "code");
    v.last_message = field(e, "message");
  }
}

}  // namespace

TrajectoryView read_trajectory_view(const std::string& path, const TrajectoryLimits& limits) {
  TrajectoryView v;
  v.path = path;
  if (path.empty()) return v;
  std::ifstream f(path, std::ios::binary);
  if (!f) return v;
  v.found = true;
  size_t total = 0;
  std::string line;
  while (std::getline(f, line)) {
    auto ev = json::parse(line, nullptr, false);
    if (!ev.is_object()) continue;
    note_failure(ev, v);
    if (v.truncated) continue;
    for (auto& e : events_of(ev)) {
      e.text = cut(std::move(e.text), limits.text_chars);
      if (total + e.text.size() > limits.total_chars) {
        v.truncated = true;
        break;
      }
      total += e.text.size();
      v.events.push_back(std::move(e));
    }
  }
  return v;
}

}  // namespace nki_agent
