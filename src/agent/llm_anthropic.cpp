// The Anthropic Messages protocol (agent/llm_protocol.h): `POST {base_url}/messages`.
//
// The API wants strictly alternating user / assistant turns made of content blocks, so the
// provider-neutral history is folded: consecutive tool results (and a user text after them)
// become one user message of tool_result blocks, and an assistant turn becomes its text block
// plus one tool_use block per call. Stored tool arguments that are not a JSON object (the model
// wrote them malformed) are sent as {} — the API rejects anything else — while the raw text
// stays in the trajectory.
#include <fmt/format.h>

#include <map>

#include "agent/llm_protocol.h"

namespace nki_agent {

namespace {

using nlohmann::json;

std::string stop_reason_of(const std::string& s, bool has_calls) {
  if (s == "stop_sequence") return "end_turn";
  if (s.empty()) return has_calls ? "tool_use" : "end_turn";
  return s;  // end_turn, tool_use, max_tokens, refusal, or the API's own newer word
}

// Appends the blocks as a turn of `role`, merging into the previous turn when it has the same role.
void add_turn(json& messages, const char* role, json blocks) {
  if (blocks.empty()) return;
  if (!messages.empty() && messages.back()["role"] == role) {
    for (auto& b : blocks) messages.back()["content"].push_back(std::move(b));
    return;
  }
  messages.push_back({{"role", role}, {"content", std::move(blocks)}});
}

json messages_json(const std::vector<Message>& history) {
  json messages = json::array();
  for (const auto& m : history) {
    json blocks = json::array();
    switch (m.role) {
      case Role::kUser:
        // The API rejects empty text blocks.
        if (!m.text.empty()) blocks.push_back({{"type", "text"}, {"text", m.text}});
        add_turn(messages, "user", std::move(blocks));
        break;
      case Role::kTool:
        blocks.push_back(
            {{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.text}, {"is_error", m.is_error}});
        add_turn(messages, "user", std::move(blocks));
        break;
      case Role::kAssistant:
        if (!m.text.empty()) blocks.push_back({{"type", "text"}, {"text", m.text}});
        for (const auto& c : m.tool_calls) {
          auto input = arguments_object(c.arguments);
          blocks.push_back({{"type", "tool_use"},
                            {"id", c.id},
                            {"name", c.name},
                            {"input", input ? std::move(*input) : json::object()}});
        }
        add_turn(messages, "assistant", std::move(blocks));
        break;
    }
  }
  return messages;
}

class AnthropicDecoder final : public StreamDecoder {
 public:
  bool on_event(const SseEvent& ev, const TextSink& on_text) override {
    json j = parse_untrusted_json(ev.data);
    if (j.is_discarded() || !j.is_object()) {
      error = Diagnostic::error("nkia_llm_protocol",
                                fmt::format("a stream event is not a JSON object: {}", ev.data.substr(0, 200)));
      error_retryable = true;  // a garbled stream; another attempt may be clean
      return false;
    }
    std::string type = string_member(j, "type");
    if (type.empty()) type = ev.event;
    if (type == "message_start") {
      const json* msg = member(j, "message");
      if (msg) {
        if (const std::string m = string_member(*msg, "model"); !m.empty()) model_ = m;
        if (const json* u = member(*msg, "usage")) {
          usage_.input_tokens = int_member(*u, "input_tokens");
          usage_.output_tokens = int_member(*u, "output_tokens");
        }
      }
    } else if (type == "content_block_start") {
      Block& b = blocks_[int_member(j, "index")];
      const json* cb = member(j, "content_block");
      if (!cb) return true;
      b.type = string_member(*cb, "type");
      if (b.type == "text") {
        append_text(b, string_member(*cb, "text"), on_text);
      } else if (b.type == "tool_use") {
        b.call.id = string_member(*cb, "id");
        b.call.name = string_member(*cb, "name");
      }
    } else if (type == "content_block_delta") {
      Block& b = blocks_[int_member(j, "index")];
      const json* d = member(j, "delta");
      if (!d) return true;
      const std::string dtype = string_member(*d, "type");
      if (dtype == "text_delta") {
        if (b.type.empty()) b.type = "text";
        append_text(b, string_member(*d, "text"), on_text);
      } else if (dtype == "input_json_delta") {
        b.call.arguments += string_member(*d, "partial_json");
      }
      // thinking and signature deltas are not part of the reply
    } else if (type == "content_block_stop") {
      blocks_[int_member(j, "index")].stopped = true;
    } else if (type == "message_delta") {
      if (const json* d = member(j, "delta")) {
        if (const std::string s = string_member(*d, "stop_reason"); !s.empty()) stop_reason_ = s;
      }
      if (const json* u = member(j, "usage")) {
        // Cumulative counts: the last one wins.
        if (const json* o = member(*u, "output_tokens"); o && o->is_number()) usage_.output_tokens = o->get<int64_t>();
        if (const json* i = member(*u, "input_tokens"); i && i->is_number() && i->get<int64_t>() > 0)
          usage_.input_tokens = i->get<int64_t>();
      }
    } else if (type == "message_stop") {
      done_ = true;
    } else if (type == "error") {
      const json* e = member(j, "error");
      const std::string etype = e ? string_member(*e, "type") : std::string();
      const std::string msg = error_message_of(j);
      error_retryable = etype == "overloaded_error";
      error = Diagnostic::error(error_retryable ? "nkia_llm_retries" : "nkia_llm_http",
                                fmt::format("the server reported {} in the stream: {}",
                                            etype.empty() ? "an error" : etype, msg.substr(0, 500)));
      return false;
    }
    // ping and event types added to the API later are ignored.
    return true;
  }

  bool complete() const override { return done_; }

  ChatResponse finish() override {
    ChatResponse r;
    for (auto& [index, b] : blocks_) {
      if (b.type == "text") {
        r.text += b.text;
      } else if (b.type == "tool_use") {
        // A call the stream cut before its block ended is kept only if its arguments are whole.
        if (!b.stopped && !arguments_object(b.call.arguments)) continue;
        // No input_json_delta at all means the tool takes no arguments: {} as in a JSON reply.
        if (b.call.arguments.empty()) b.call.arguments = "{}";
        r.tool_calls.push_back(std::move(b.call));
      }
    }
    r.usage = usage_;
    r.model = model_;
    r.stop_reason = done_ ? stop_reason_of(stop_reason_, !r.tool_calls.empty()) : "truncated";
    return r;
  }

 private:
  struct Block {
    std::string type;
    std::string text;
    ToolCall call;
    bool stopped = false;
  };

  static void append_text(Block& b, const std::string& t, const TextSink& on_text) {
    if (t.empty()) return;
    b.text += t;
    if (on_text) on_text(t);
  }

  std::map<int64_t, Block> blocks_;  // by the stream's block index, in order
  std::string stop_reason_, model_;
  Usage usage_;
  bool done_ = false;
};

class AnthropicProtocol final : public LlmProtocol {
 public:
  std::string url(const LlmConfig& c) const override { return join_url(c.base_url, "messages"); }

  std::vector<std::string> headers(const std::string& api_key) const override {
    std::vector<std::string> h = {"anthropic-version: 2023-06-01"};
    if (!api_key.empty()) h.push_back("x-api-key: " + api_key);
    return h;
  }

  json body(const LlmConfig& c, const ChatRequest& req, bool stream) const override {
    json b = {{"model", c.model},
              {"max_tokens", req.max_tokens > 0 ? req.max_tokens : c.max_tokens},
              {"temperature", req.temperature >= 0 ? req.temperature : c.temperature},
              {"messages", messages_json(req.messages)}};
    if (!req.system.empty()) b["system"] = req.system;
    if (!req.tools.empty()) {
      json tools = json::array();
      for (const auto& t : req.tools)
        tools.push_back({{"name", t.name},
                         {"description", t.description},
                         {"input_schema", t.parameters.is_null() ? json({{"type", "object"}}) : t.parameters}});
      b["tools"] = std::move(tools);
    }
    if (stream) b["stream"] = true;
    return b;
  }

  Result<ChatResponse> parse(const json& answer) const override {
    if (!answer.is_object()) return fail("nkia_llm_protocol", "the answer is not a JSON object");
    const json* content = member(answer, "content");
    if (!content || !content->is_array()) {
      const std::string msg = error_message_of(answer);
      return fail("nkia_llm_protocol", msg.empty()
                                           ? std::string("the answer has no \"content\" array")
                                           : fmt::format("the answer has no \"content\"; the server says: {}", msg));
    }
    ChatResponse r;
    for (const auto& block : *content) {
      const std::string type = string_member(block, "type");
      if (type == "text") {
        r.text += string_member(block, "text");
      } else if (type == "tool_use") {
        const json* input = member(block, "input");
        r.tool_calls.push_back(
            {string_member(block, "id"), string_member(block, "name"), input ? input->dump() : std::string("{}")});
      }
    }
    r.stop_reason = stop_reason_of(string_member(answer, "stop_reason"), !r.tool_calls.empty());
    if (const json* u = member(answer, "usage")) {
      r.usage.input_tokens = int_member(*u, "input_tokens");
      r.usage.output_tokens = int_member(*u, "output_tokens");
    }
    r.model = string_member(answer, "model");
    return r;
  }

  std::unique_ptr<StreamDecoder> decoder() const override { return std::make_unique<AnthropicDecoder>(); }
};

}  // namespace

std::unique_ptr<LlmProtocol> make_anthropic_protocol() {
  return std::make_unique<AnthropicProtocol>();
}

}  // namespace nki_agent
