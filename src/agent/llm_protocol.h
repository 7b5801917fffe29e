// agent/llm_protocol.h — what differs between the OpenAI-compatible and the Anthropic APIs
// (internal to the agent module; agent/llm_client.cpp owns the HTTP, retries and deadlines).
//
// A protocol turns a ChatRequest into a request body and headers, a JSON answer into a
// ChatResponse, an error body into a message, and a stream of SSE events into a ChatResponse
// (through a StreamDecoder, one per attempt). Nothing here does I/O, sleeps or throws: malformed
// server input is a Diagnostic with code nkia_llm_protocol, which the client retries
// (agent/llm_client.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/llm.h"
#include "agent/sse.h"
#include "core/json_bounded.h"

namespace nki_agent {

// Consumes one attempt's stream.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // One event. Returns false when the stream must stop: the server sent an error, or the event
  // broke the protocol (see error / error_retryable).
  virtual bool on_event(const SseEvent& ev, const TextSink& on_text) = 0;
  // Whether the stream's final event ([DONE], message_stop) arrived.
  virtual bool complete() const = 0;
  // The reply so far. When the final event never came: stop_reason "truncated" (unless the
  // provider already gave one), and a tool call cut in the middle of its arguments is dropped.
  virtual ChatResponse finish() = 0;

  std::optional<Diagnostic> error;
  // Another attempt may help: an event that cannot be decoded (code nkia_llm_protocol), Anthropic's
  // overloaded_error event. Not so for an error the server reports (code nkia_llm_http).
  bool error_retryable = false;
};

class LlmProtocol {
 public:
  virtual ~LlmProtocol() = default;
  virtual std::string url(const LlmConfig& c) const = 0;
  // Headers besides Content-Type; `api_key` may be empty (local servers).
  virtual std::vector<std::string> headers(const std::string& api_key) const = 0;
  virtual nlohmann::json body(const LlmConfig& c, const ChatRequest& req, bool stream) const = 0;
  virtual Result<ChatResponse> parse(const nlohmann::json& answer) const = 0;
  virtual std::unique_ptr<StreamDecoder> decoder() const = 0;
};

std::unique_ptr<LlmProtocol> make_openai_protocol();
std::unique_ptr<LlmProtocol> make_anthropic_protocol();

// Shared helpers of the two protocols.
// JSON from a server (or from a model, through it), nested at most kMaxJsonDepth deep
// (core/json_bounded.h): nlohmann parses any depth, but dump() recurses, and a hostile answer of a
// million '[' would overflow the stack. Returns a discarded value when the text is not JSON or nests
// deeper.
nlohmann::json parse_untrusted_json(std::string_view text);
// base_url without trailing slashes, then "/" + path.
std::string join_url(const std::string& base_url, const std::string& path);
// The server's error text in {"error": {"message": ...}} (both providers), or "" when absent.
std::string error_message_of(const nlohmann::json& answer);
// Parsed tool arguments when they form a JSON object, else nullopt.
std::optional<nlohmann::json> arguments_object(const std::string& raw);
// Drops the last call of a truncated reply when its arguments were cut off (do not parse).
void drop_cut_tool_call(std::vector<ToolCall>& calls);

// Lenient readers of a server's JSON: a missing or mistyped member reads as absent, "" or 0.
inline const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}
inline std::string string_member(const nlohmann::json& j, const char* key) {
  const nlohmann::json* v = member(j, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}
inline int64_t int_member(const nlohmann::json& j, const char* key) {
  const nlohmann::json* v = member(j, key);
  return v && v->is_number() ? v->get<int64_t>() : 0;
}

}  // namespace nki_agent
