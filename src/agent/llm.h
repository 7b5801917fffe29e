// agent/llm.h — the conversation the agent has with a model, and the clients that carry it.
//
// One provider-neutral message model (a system prompt, then user / assistant / tool messages, the
// assistant's tool calls carrying ids that tool results answer) and one client interface. Two
// clients implement it over libcurl (agent/http.h): the OpenAI-compatible chat completions API
// (vLLM, SGLang, llama.cpp server, hosted APIs; `tools` / `tool_calls`) and the Anthropic Messages
// API (`tool_use` / `tool_result` blocks). Both stream (SSE) when asked, count tokens, retry with
// backoff on 429 / 5xx / dropped connections / answers that are not the protocol, honour a
// per-request deadline and a cancellation flag (the policy: agent/llm_client.cpp).
//
// A failure that retries cannot cure (401, 400, a refusal that is not a reply, a deadline) is a
// Result error with a stable code, never an exception and never a crash:
//   nkia_llm_config     the configuration is incomplete or invalid, or it names a provider's public
//                       API with no key in the environment (the message says what to set)
//   nkia_llm_http       a non-retryable HTTP status, or an error the server reported in a stream
//                       (the message has the status and the body's error message, truncated)
//   nkia_llm_retries    still failing after the last retry (the last status or transport error)
//   nkia_llm_timeout    the request deadline passed
//   nkia_llm_cancelled  the cancellation flag was set
//   nkia_llm_protocol   the last attempt's answer was not the protocol either (not JSON, an HTML
//                       page, no choices/content, an undecodable stream), or it was too large
// A reply that is cut short (a stream broken after reply text arrived, max tokens) is NOT an
// error: it is a ChatResponse with stop_reason "truncated" / "max_tokens" and whatever text and
// well-formed tool calls came.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json parameters;  // JSON Schema of the arguments object
};

struct ToolCall {
  std::string id;  // the provider's id (OpenAI "call_…", Anthropic "toolu_…")
  std::string name;
  std::string arguments;  // the raw JSON text the model wrote (may be malformed)
  // The arguments parsed; is_discarded() / not an object when the text was not a JSON object.
  nlohmann::json parsed() const;
};

enum class Role : uint8_t { kUser, kAssistant, kTool };
std::string_view role_name(Role r);

struct Message {
  Role role = Role::kUser;
  std::string text;                  // user text, assistant text, or a tool result's content
  std::vector<ToolCall> tool_calls;  // assistant only
  std::string tool_call_id;          // tool only: the call this answers
  std::string tool_name;             // tool only
  bool is_error = false;             // tool only: the tool failed (Anthropic's is_error)

  nlohmann::json to_json() const;  // provider-neutral, for trajectories
  static Result<Message> from_json(const nlohmann::json& j);
};

struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  Usage& operator+=(const Usage& o) {
    input_tokens += o.input_tokens;
    output_tokens += o.output_tokens;
    return *this;
  }
};

struct ChatRequest {
  std::string system;
  std::vector<Message> messages;
  std::vector<ToolSpec> tools;  // empty: no tools offered
  // Unset (negative / zero) fields take the client's configuration.
  double temperature = -1;
  int max_tokens = 0;
  uint64_t seed = 0;  // sent as "seed" to OpenAI-compatible servers when nonzero
};

struct ChatResponse {
  std::string text;
  std::vector<ToolCall> tool_calls;
  // "end_turn", "tool_use", "max_tokens", "refusal", "truncated" (the stream ended without its
  // final event), or the provider's own word when it is none of these.
  std::string stop_reason;
  Usage usage;
  std::string model;   // as the server named it
  int attempts = 1;    // HTTP requests made (retries + 1)
  double seconds = 0;  // wall time, all attempts
};

// Configuration of one model endpoint. Sources, later ones winning: built-in defaults, a TOML file
// ([llm] table, or [models.NAME] tables chosen by name), the NKIA_LLM_* environment, flags.
// The API key is read from the environment variable named by api_key_env, never from a file.
struct LlmConfig {
  std::string name;         // what trajectories and results call it ("gpt-4o", "local-qwen")
  std::string provider;     // "openai" | "anthropic"
  std::string base_url;     // e.g. "https://api.openai.com/v1", "http://127.0.0.1:8000/v1"
  std::string model;        // the provider's model id
  std::string api_key_env;  // default OPENAI_API_KEY / ANTHROPIC_API_KEY; empty key allowed for local servers
  double temperature = 0.7;
  int max_tokens = 8192;
  bool stream = true;
  double timeout_s = 300;  // per request, all attempts together
  double connect_timeout_s = 10;
  int max_retries = 4;
  double backoff_initial_s = 1.0;  // doubled each retry, with jitter; Retry-After wins when given
  double backoff_max_s = 30;
  double price_input_per_mtok = 0;  // USD per million tokens, for cost accounting
  double price_output_per_mtok = 0;

  double cost_usd(const Usage& u) const {
    return (static_cast<double>(u.input_tokens) * price_input_per_mtok +
            static_cast<double>(u.output_tokens) * price_output_per_mtok) *
           1e-6;
  }
  nlohmann::json to_json() const;  // everything but the key
};

// Stream observer: text deltas as they arrive (progress display). May be empty.
using TextSink = std::function<void(std::string_view delta)>;

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  virtual const LlmConfig& config() const = 0;
  // One model call. `cancel` may be null; when it becomes true the call ends with
  // nkia_llm_cancelled within about 100 ms.
  virtual Result<ChatResponse> chat(const ChatRequest& req, const std::atomic<bool>* cancel = nullptr,
                                    const TextSink& on_text = {}) = 0;
};

Result<std::unique_ptr<LlmClient>> make_llm_client(const LlmConfig& config);

}  // namespace nki_agent
