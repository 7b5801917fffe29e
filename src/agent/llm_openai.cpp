// The OpenAI-compatible chat completions protocol (agent/llm_protocol.h): hosted APIs and local
// servers (vLLM, SGLang, llama.cpp) that speak `POST {base_url}/chat/completions`.
//
// Servers differ in small ways, so reading is lenient where the meaning is clear: content may be a
// string, null or an array of text parts; tool arguments may come as a string or an object; usage
// may sit in the last choice chunk or in a chunk of its own. Anything else off-protocol is an
// nkia_llm_protocol Diagnostic.
#include <fmt/format.h>

#include <map>

#include "agent/llm_protocol.h"

namespace nki_agent {

namespace {

using nlohmann::json;

// "content" as a string, null, or [{"type":"text","text":...}, ...].
std::string content_text(const json* c) {
  if (!c) return {};
  if (c->is_string()) return c->get<std::string>();
  std::string s;
  if (c->is_array())
    for (const auto& part : *c) s += string_member(part, "text");
  return s;
}

// Arguments arrive as JSON text (the standard) or, from some servers, as the object itself.
std::string arguments_text(const json* a) {
  if (!a || a->is_null()) return {};
  if (a->is_string()) return a->get<std::string>();
  return a->dump();
}

std::string stop_reason_of(const std::string& finish_reason, bool has_calls) {
  if (finish_reason == "stop") return "end_turn";
  if (finish_reason == "tool_calls" || finish_reason == "function_call") return "tool_use";
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "content_filter") return "refusal";
  if (finish_reason.empty()) return has_calls ? "tool_use" : "end_turn";
  return finish_reason;
}

Usage usage_of(const json* u) {
  Usage usage;
  if (u && u->is_object()) {
    usage.input_tokens = int_member(*u, "prompt_tokens");
    usage.output_tokens = int_member(*u, "completion_tokens");
  }
  return usage;
}

json message_json(const Message& m) {
  switch (m.role) {
    case Role::kUser: return {{"role", "user"}, {"content", m.text}};
    case Role::kTool:
      // OpenAI has no error flag for tool results: the content itself must say the tool failed.
      return {{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.text}};
    case Role::kAssistant: {
      json j = {{"role", "assistant"}};
      // With tool calls and no text, content is null (an empty string upsets some servers).
      j["content"] = m.text.empty() && !m.tool_calls.empty() ? json(nullptr) : json(m.text);
      if (!m.tool_calls.empty()) {
        json calls = json::array();
        for (const auto& c : m.tool_calls)
          calls.push_back(
              {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
        j["tool_calls"] = std::move(calls);
      }
      return j;
    }
  }
  return json::object();
}

class OpenAiDecoder final : public StreamDecoder {
 public:
  bool on_event(const SseEvent& ev, const TextSink& on_text) override {
    if (ev.data == "[DONE]") {
      done_ = true;
      return true;
    }
    json j = parse_untrusted_json(ev.data);
    if (j.is_discarded() || !j.is_object()) {
      error = Diagnostic::error("nkia_llm_protocol",
                                fmt::format("a stream chunk is not a JSON object: {}", ev.data.substr(0, 200)));
      error_retryable = true;  // a garbled stream; another attempt may be clean
      return false;
    }
    if (const json* e = member(j, "error"); e && !e->is_null()) {
      std::string msg = error_message_of(j);
      error = Diagnostic::error("nkia_llm_http", fmt::format("the server reported an error in the stream: {}",
                                                             msg.empty() ? e->dump().substr(0, 500) : msg));
      return false;
    }
    if (const std::string m = string_member(j, "model"); !m.empty()) model_ = m;
    if (const json* u = member(j, "usage"); u && u->is_object()) usage_ = usage_of(u);
    const json* choices = member(j, "choices");
    if (!choices || !choices->is_array()) return true;
    for (const auto& ch : *choices) {
      if (int_member(ch, "index") != 0) continue;  // n = 1: only the first choice is asked for
      if (const std::string f = string_member(ch, "finish_reason"); !f.empty()) finish_reason_ = f;
      const json* delta = member(ch, "delta");
      if (!delta || !delta->is_object()) continue;
      if (const std::string t = content_text(member(*delta, "content")); !t.empty()) {
        text_ += t;
        if (on_text) on_text(t);
      }
      refusal_ += string_member(*delta, "refusal");
      const json* calls = member(*delta, "tool_calls");
      if (!calls || !calls->is_array()) continue;
      for (const auto& c : *calls) {
        // Deltas of one call share its index; the id and name come with the first.
        const json* idx = member(c, "index");
        const int64_t index =
            idx && idx->is_number_integer() ? idx->get<int64_t>() : static_cast<int64_t>(calls_.size());
        auto [it, fresh] = slot_.try_emplace(index, calls_.size());
        if (fresh) calls_.emplace_back();
        ToolCall& call = calls_[it->second];
        if (const std::string id = string_member(c, "id"); !id.empty()) call.id = id;
        if (const json* fn = member(c, "function")) {
          if (const std::string name = string_member(*fn, "name"); !name.empty()) call.name = name;
          call.arguments += arguments_text(member(*fn, "arguments"));
        }
      }
    }
    return true;
  }

  bool complete() const override { return done_; }

  ChatResponse finish() override {
    ChatResponse r;
    r.text = std::move(text_);
    r.tool_calls = std::move(calls_);
    r.usage = usage_;
    r.model = model_;
    if (!done_ && finish_reason_.empty()) {
      r.stop_reason = "truncated";
      drop_cut_tool_call(r.tool_calls);
    } else {
      r.stop_reason = stop_reason_of(finish_reason_, !r.tool_calls.empty());
    }
    if (!refusal_.empty()) {
      r.stop_reason = "refusal";
      if (r.text.empty()) r.text = refusal_;
    }
    return r;
  }

 private:
  std::string text_, refusal_, finish_reason_, model_;
  std::vector<ToolCall> calls_;
  std::map<int64_t, size_t> slot_;  // a delta's index → its position in calls_
  Usage usage_;
  bool done_ = false;
};

class OpenAiProtocol final : public LlmProtocol {
 public:
  std::string url(const LlmConfig& c) const override { return join_url(c.base_url, "chat/completions"); }

  std::vector<std::string> headers(const std::string& api_key) const override {
    std::vector<std::string> h;
    if (!api_key.empty()) h.push_back("Authorization: Bearer " + api_key);
    return h;
  }

  json body(const LlmConfig& c, const ChatRequest& req, bool stream) const override {
    json messages = json::array();
    if (!req.system.empty()) messages.push_back({{"role", "system"}, {"content", req.system}});
    for (const auto& m : req.messages) messages.push_back(message_json(m));
    json b = {{"model", c.model},
              {"messages", std::move(messages)},
              {"temperature", req.temperature >= 0 ? req.temperature : c.temperature},
              {"max_tokens", req.max_tokens > 0 ? req.max_tokens : c.max_tokens}};
    if (req.seed != 0) b["seed"] = req.seed;
    if (!req.tools.empty()) {
      json tools = json::array();
      for (const auto& t : req.tools)
        tools.push_back({{"type", "function"},
                         {"function",
                          {{"name", t.name},
                           {"description", t.description},
                           {"parameters", t.parameters.is_null() ? json::object() : t.parameters}}}});
      b["tools"] = std::move(tools);
    }
    if (stream) {
      b["stream"] = true;
      b["stream_options"] = {{"include_usage", true}};
    }
    return b;
  }

  Result<ChatResponse> parse(const json& answer) const override {
    if (!answer.is_object()) return fail("nkia_llm_protocol", "the answer is not a JSON object");
    const json* choices = member(answer, "choices");
    if (!choices || !choices->is_array() || choices->empty()) {
      const std::string msg = error_message_of(answer);
      return fail("nkia_llm_protocol", msg.empty()
                                           ? std::string("the answer has no \"choices\"")
                                           : fmt::format("the answer has no \"choices\"; the server says: {}", msg));
    }
    const json* msg = member((*choices)[0], "message");
    if (!msg || !msg->is_object()) return fail("nkia_llm_protocol", "choices[0] has no \"message\" object");
    ChatResponse r;
    r.text = content_text(member(*msg, "content"));
    if (const json* calls = member(*msg, "tool_calls"); calls && calls->is_array()) {
      for (const auto& c : *calls) {
        const json* fn = member(c, "function");
        if (!fn || !fn->is_object()) return fail("nkia_llm_protocol", "a tool call has no \"function\" object");
        r.tool_calls.push_back(
            {string_member(c, "id"), string_member(*fn, "name"), arguments_text(member(*fn, "arguments"))});
      }
    }
    r.stop_reason = stop_reason_of(string_member((*choices)[0], "finish_reason"), !r.tool_calls.empty());
    if (const std::string refusal = string_member(*msg, "refusal"); !refusal.empty()) {
      r.stop_reason = "refusal";
      r.text = refusal;
    }
    r.usage = usage_of(member(answer, "usage"));
    r.model = string_member(answer, "model");
    return r;
  }

  std::unique_ptr<StreamDecoder> decoder() const override { return std::make_unique<OpenAiDecoder>(); }
};

}  // namespace

std::unique_ptr<LlmProtocol> make_openai_protocol() {
  return std::make_unique<OpenAiProtocol>();
}

}  // namespace nki_agent
