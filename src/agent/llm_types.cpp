// agent/llm_types.cpp — the provider-neutral message model of agent/llm.h as JSON (trajectories).
#include <fmt/format.h>

#include "agent/llm.h"
#include "agent/llm_protocol.h"

namespace nki_agent {

// A model's arguments are untrusted text: parsed with the depth limit of llm_protocol.h (a deeply
// nested value would overflow the stack when dumped).
nlohmann::json ToolCall::parsed() const {
  return parse_untrusted_json(arguments);
}

std::string_view role_name(Role r) {
  switch (r) {
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
  }
  return "user";
}

nlohmann::json Message::to_json() const {
  nlohmann::json j = {{"role", role_name(role)}, {"text", text}};
  if (!tool_calls.empty()) {
    auto calls = nlohmann::json::array();
    for (const auto& c : tool_calls) calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    j["tool_calls"] = std::move(calls);
  }
  if (role == Role::kTool) {
    j["tool_call_id"] = tool_call_id;
    j["tool_name"] = tool_name;
    if (is_error) j["is_error"] = true;
  }
  return j;
}

Result<Message> Message::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("role") || !j["role"].is_string())
    return fail("nkia_bad_argument", "a message is an object with a \"role\"");
  Message m;
  const std::string role = j["role"].get<std::string>();
  if (role == "user")
    m.role = Role::kUser;
  else if (role == "assistant")
    m.role = Role::kAssistant;
  else if (role == "tool")
    m.role = Role::kTool;
  else
    return fail("nkia_bad_argument", fmt::format("unknown message role '{}'", role));
  if (j.contains("text") && j["text"].is_string()) m.text = j["text"].get<std::string>();
  if (j.contains("tool_calls") && j["tool_calls"].is_array()) {
    for (const auto& c : j["tool_calls"]) {
      if (!c.is_object()) return fail("nkia_bad_argument", "a tool call is an object");
      ToolCall t;
      t.id = c.value("id", "");
      t.name = c.value("name", "");
      t.arguments = c.value("arguments", "");
      m.tool_calls.push_back(std::move(t));
    }
  }
  m.tool_call_id = j.value("tool_call_id", "");
  m.tool_name = j.value("tool_name", "");
  m.is_error = j.value("is_error", false);
  return m;
}

nlohmann::json LlmConfig::to_json() const {
  return {{"name", name},
          {"provider", provider},
          {"base_url", base_url},
          {"model", model},
          {"api_key_env", api_key_env},
          {"temperature", temperature},
          {"max_tokens", max_tokens},
          {"stream", stream},
          {"timeout_s", timeout_s},
          {"connect_timeout_s", connect_timeout_s},
          {"max_retries", max_retries},
          {"backoff_initial_s", backoff_initial_s},
          {"backoff_max_s", backoff_max_s},
          {"price_input_per_mtok", price_input_per_mtok},
          {"price_output_per_mtok", price_output_per_mtok}};
}

}  // namespace nki_agent
