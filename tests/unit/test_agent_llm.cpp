// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// Agent LLM clients: the SSE parser, both protocols (streaming and not) against the loopback mock
// server, retries / deadlines / cancellation, and the HTTP layer's limits. Endpoint faults are in
// test_agent_llm_faults.cpp, configuration loading in test_agent_llm_config.cpp.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "agent/http.h"
#include "agent/llm.h"
#include "agent/sse.h"
#include "support/mock_llm.h"
#include "support/mock_llm_fixture.h"

namespace nki_agent {
namespace {

using nlohmann::json;
using testing::LlmProtocolTest;
using testing::MockLlmServer;
using testing::MockLlmTest;
using testing::MockReply;
using testing::MockToolCall;
using testing::Mode;
using testing::mode_name;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------------
// SSE parser

std::vector<SseEvent> parse_all(const std::string& bytes, size_t piece) {
  SseParser p;
  std::vector<SseEvent> out;
  for (size_t i = 0; i < bytes.size(); i += piece) p.feed(std::string_view(bytes).substr(i, piece), out);
  p.finish(out);
  return out;
}

TEST(Sse, SameEventsWhateverTheChunking) {
  const std::string stream =
      ": keep-alive comment\n"
      "event: content_block_delta\n"
      "data: {\"a\": 1}\n"
      "\n"
      "data: first line\n"
      "data: second line\n"
      "id: 7\n"
      "\n"
      "data:no-space\n"
      "\n"
      "data: [DONE]\n\n";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, stream.size()}) {
    auto ev = parse_all(stream, piece);
    ASSERT_EQ(ev.size(), 4u) << "piece " << piece;
    EXPECT_EQ(ev[0].event, "content_block_delta");
    EXPECT_EQ(ev[0].data, "{\"a\": 1}");
    EXPECT_EQ(ev[1].event, "");
    EXPECT_EQ(ev[1].data, "first line\nsecond line");
    EXPECT_EQ(ev[1].id, "7");
    EXPECT_EQ(ev[2].data, "no-space");
    EXPECT_EQ(ev[3].data, "[DONE]");
  }
}

TEST(Sse, CrLfAndCrLineEnds) {
  const std::string crlf = "event: x\r\ndata: one\r\n\r\ndata: two\r\rdata: three\n\n";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{5}, crlf.size()}) {
    auto ev = parse_all(crlf, piece);
    ASSERT_EQ(ev.size(), 3u) << "piece " << piece;
    EXPECT_EQ(ev[0].event, "x");
    EXPECT_EQ(ev[0].data, "one");
    EXPECT_EQ(ev[1].data, "two");
    EXPECT_EQ(ev[2].data, "three");
  }
  // A \r ending one chunk and the \n starting the next are one line break, not two.
  SseParser p;
  std::vector<SseEvent> out;
  p.feed("data: a\r", out);
  p.feed("\ndata: b\r", out);
  p.feed("\n\r", out);
  p.feed("\n", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "a\nb");
}

TEST(Sse, CommentsAndEventsWithoutDataAreNotEvents) {
  auto ev = parse_all(":ping\n\nevent: lonely\n\n: another\ndata: x\n\n", 4);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "x");
  EXPECT_EQ(ev[0].event, "");  // the name of the data-less event does not leak into the next
}

TEST(Sse, EndOfStream) {
  // Whole lines without the closing blank line: delivered by finish().
  auto ev = parse_all("data: whole\n", 100);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "whole");
  // A line cut in the middle is a fragment: dropped.
  ev = parse_all("data: done\n\ndata: {\"cut", 100);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "done");
}

TEST(Sse, ByteOrderMarkAndOverlongLines) {
  auto ev = parse_all(
      "\xEF\xBB\xBF"
      "data: bom\n\n",
      1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "bom");

  SseParser p(64);
  std::vector<SseEvent> out;
  p.feed("data: " + std::string(100, 'x'), out);
  EXPECT_TRUE(p.failed());
  p.feed("\n\ndata: after\n\n", out);
  EXPECT_TRUE(out.empty());
}

// ---------------------------------------------------------------------------------------------
// Both protocols against the mock server

TEST_P(LlmProtocolTest, PlainText) {
  const std::string text = "Here is the kernel: tiles of 128 partitions, then nl.store — done.";
  server.push({.text = text, .input_tokens = 12, .output_tokens = 34});
  std::string seen;
  int deltas = 0;
  auto r = client()->chat(hello(), nullptr, [&](std::string_view d) {
    seen += d;
    ++deltas;
  });
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, text);
  EXPECT_EQ(r->stop_reason, "end_turn");
  EXPECT_TRUE(r->tool_calls.empty());
  EXPECT_EQ(r->usage.input_tokens, 12);
  EXPECT_EQ(r->usage.output_tokens, 34);
  EXPECT_EQ(r->model, "mock-model");
  EXPECT_EQ(r->attempts, 1);
  EXPECT_GT(r->seconds, 0);
  EXPECT_EQ(seen, text);
  EXPECT_EQ(deltas, GetParam().stream ? 3 : 1);

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const json& b = reqs[0].body;
  EXPECT_EQ(b["model"], "mock-model");
  EXPECT_EQ(b["max_tokens"], 8192);
  EXPECT_DOUBLE_EQ(b["temperature"].get<double>(), 0.7);
  EXPECT_EQ(b.value("stream", false), GetParam().stream);
  if (anthropic()) {
    EXPECT_EQ(reqs[0].path, "/v1/messages");
    EXPECT_EQ(b["system"], "You write NKI kernels.");
    ASSERT_EQ(b["messages"].size(), 1u);
    EXPECT_EQ(b["messages"][0]["role"], "user");
    EXPECT_EQ(b["messages"][0]["content"][0]["text"], "Write a vector add.");
    EXPECT_EQ(reqs[0].headers["anthropic-version"], "2023-06-01");
  } else {
    EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
    ASSERT_EQ(b["messages"].size(), 2u);
    EXPECT_EQ(b["messages"][0]["role"], "system");
    EXPECT_EQ(b["messages"][0]["content"], "You write NKI kernels.");
    EXPECT_EQ(b["messages"][1]["role"], "user");
    if (GetParam().stream) {
      EXPECT_EQ(b["stream_options"]["include_usage"], true);
    }
  }
}

TEST_P(LlmProtocolTest, RequestOverridesTemperatureMaxTokensAndSeed) {
  server.push({.text = "ok"});
  ChatRequest req = hello();
  req.temperature = 0.0;
  req.max_tokens = 77;
  req.seed = 42;
  ASSERT_TRUE(client()->chat(req));
  const json b = server.requests().at(0).body;
  EXPECT_DOUBLE_EQ(b["temperature"].get<double>(), 0.0);
  EXPECT_EQ(b["max_tokens"], 77);
  if (anthropic()) {
    EXPECT_FALSE(b.contains("seed"));
  } else {
    EXPECT_EQ(b["seed"], 42);
  }
}

TEST_P(LlmProtocolTest, OneToolCall) {
  server.push({.text = "Let me compile it.",
               .tool_calls = {{"id_1", "compile", R"({"path": "kernel.py", "shapes": [128, 512]})"}}});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "Let me compile it.");
  EXPECT_EQ(r->stop_reason, "tool_use");
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_EQ(r->tool_calls[0].id, "id_1");
  EXPECT_EQ(r->tool_calls[0].name, "compile");
  EXPECT_EQ(r->tool_calls[0].parsed(), json({{"path", "kernel.py"}, {"shapes", {128, 512}}}));
}

TEST_P(LlmProtocolTest, TwoToolCallsWithGeneratedIds) {
  server.push(
      {.tool_calls = {{"", "read_file", R"({"path": "a.py"})"}, {"", "run_tests", R"({"task": "add", "n": 3})"}}});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "");
  EXPECT_EQ(r->stop_reason, "tool_use");
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_FALSE(r->tool_calls[0].id.empty());
  EXPECT_NE(r->tool_calls[0].id, r->tool_calls[1].id);
  EXPECT_EQ(r->tool_calls[0].name, "read_file");
  EXPECT_EQ(r->tool_calls[1].name, "run_tests");
  EXPECT_EQ(r->tool_calls[0].parsed(), json({{"path", "a.py"}}));
  EXPECT_EQ(r->tool_calls[1].parsed(), json({{"task", "add"}, {"n", 3}}));
  if (!anthropic() || GetParam().stream) {
    EXPECT_EQ(r->tool_calls[1].arguments, R"({"task": "add", "n": 3})");
  }
}

TEST_P(LlmProtocolTest, FollowUpCarriesToolCallsAndResults) {
  server.push({.text = "Fixed."});
  ChatRequest req = hello();
  req.tools.push_back({"compile", "Compile a kernel file.",
                       json{{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}}});
  Message assistant{Role::kAssistant, "Two checks.", {}, "", "", false};
  assistant.tool_calls = {{"call_a", "compile", R"({"path": "k.py"})"}, {"call_b", "compile", R"({"path": )"}};
  req.messages.push_back(assistant);
  req.messages.push_back({Role::kTool, "compiled OK", {}, "call_a", "compile", false});
  req.messages.push_back({Role::kTool, "error: bad arguments", {}, "call_b", "compile", true});
  req.messages.push_back({Role::kUser, "Now make it faster.", {}, "", "", false});
  ASSERT_TRUE(client()->chat(req));

  const json b = server.requests().at(0).body;
  const json& m = b["messages"];
  if (anthropic()) {
    EXPECT_EQ(b["tools"][0]["name"], "compile");
    EXPECT_EQ(b["tools"][0]["input_schema"]["type"], "object");
    ASSERT_EQ(m.size(), 3u) << m.dump();
    EXPECT_EQ(m[1]["role"], "assistant");
    ASSERT_EQ(m[1]["content"].size(), 3u);
    EXPECT_EQ(m[1]["content"][0], json({{"type", "text"}, {"text", "Two checks."}}));
    EXPECT_EQ(m[1]["content"][1]["type"], "tool_use");
    EXPECT_EQ(m[1]["content"][1]["id"], "call_a");
    EXPECT_EQ(m[1]["content"][1]["name"], "compile");
    EXPECT_EQ(m[1]["content"][1]["input"], json({{"path", "k.py"}}));
    EXPECT_EQ(m[1]["content"][2]["input"], json::object());  // malformed stored arguments
    // Both results and the user's next words in ONE user turn.
    EXPECT_EQ(m[2]["role"], "user");
    ASSERT_EQ(m[2]["content"].size(), 3u);
    EXPECT_EQ(
        m[2]["content"][0],
        json({{"type", "tool_result"}, {"tool_use_id", "call_a"}, {"content", "compiled OK"}, {"is_error", false}}));
    EXPECT_EQ(m[2]["content"][1]["tool_use_id"], "call_b");
    EXPECT_EQ(m[2]["content"][1]["is_error"], true);
    EXPECT_EQ(m[2]["content"][2], json({{"type", "text"}, {"text", "Now make it faster."}}));
  } else {
    EXPECT_EQ(b["tools"][0]["type"], "function");
    EXPECT_EQ(b["tools"][0]["function"]["name"], "compile");
    EXPECT_EQ(b["tools"][0]["function"]["description"], "Compile a kernel file.");
    EXPECT_EQ(b["tools"][0]["function"]["parameters"]["type"], "object");
    ASSERT_EQ(m.size(), 6u) << m.dump();
    EXPECT_EQ(m[2]["role"], "assistant");
    EXPECT_EQ(m[2]["content"], "Two checks.");
    ASSERT_EQ(m[2]["tool_calls"].size(), 2u);
    EXPECT_EQ(m[2]["tool_calls"][0], json({{"id", "call_a"},
                                           {"type", "function"},
                                           {"function", {{"name", "compile"}, {"arguments", R"({"path": "k.py"})"}}}}));
    EXPECT_EQ(m[2]["tool_calls"][1]["function"]["arguments"], R"({"path": )");  // raw, as the model wrote it
    EXPECT_EQ(m[3], json({{"role", "tool"}, {"tool_call_id", "call_a"}, {"content", "compiled OK"}}));
    EXPECT_EQ(m[4]["tool_call_id"], "call_b");
    EXPECT_EQ(m[5]["role"], "user");
  }
}

TEST_P(LlmProtocolTest, MalformedToolArgumentsComeThroughRaw) {
  const std::string bad = R"({"path": "k.py", "n": )";
  server.push({.tool_calls = {{"c1", "compile", bad}}});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_FALSE(r->tool_calls[0].parsed().is_object());
  // The Anthropic JSON API cannot carry malformed input (it is always an object); everywhere else
  // the model's text arrives untouched.
  if (!anthropic() || GetParam().stream) {
    EXPECT_EQ(r->tool_calls[0].arguments, bad);
    EXPECT_TRUE(r->tool_calls[0].parsed().is_discarded());
  }
}

TEST_P(LlmProtocolTest, RetryAfterIsHonoured) {
  server.push({.text = "slow down", .status = 429, .headers = {{"Retry-After", "0.2"}}});
  server.push({.text = "ok"});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "ok");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_GE(since(t0), 0.19);
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_P(LlmProtocolTest, TwoServerErrorsThenSuccess) {
  server.push({.text = "boom", .status = 500});
  server.push({.text = "overloaded", .status = 529});
  server.push({.text = "third time lucky"});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "third time lucky");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(server.request_count(), 3u);
}

TEST_P(LlmProtocolTest, ServerErrorForeverRunsOutOfRetries) {
  LlmConfig c = config();
  c.max_retries = 2;
  for (int i = 0; i < 3; ++i) server.push({.text = "internal failure #" + std::to_string(i), .status = 503});
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_retries");
  EXPECT_NE(r.error().message.find("503"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("internal failure #2"), std::string::npos) << r.error().message;
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(server.replies_left(), 0u);
}

TEST_P(LlmProtocolTest, UnauthorizedFailsAtOnceWithoutTheKey) {
  const std::string var = "NKIA_TEST_LLM_KEY_401_" + GetParam().provider;
  const std::string key = "sk-test-secret-4242";
  ::setenv(var.c_str(), key.c_str(), 1);
  LlmConfig c = config();
  c.api_key_env = var;
  server.push({.text = "invalid api key: " + key, .status = 401});
  auto r = client(c)->chat(hello());
  ::unsetenv(var.c_str());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_http");
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_NE(r.error().message.find("401"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("invalid api key"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().format().find(key), std::string::npos) << r.error().format();
}

TEST_P(LlmProtocolTest, KeyHeadersOnlyWhenAKeyIsSet) {
  const std::string var = "NKIA_TEST_LLM_KEY_HDR_" + GetParam().provider;
  ::setenv(var.c_str(), "  sk-abc-123\n", 1);  // whitespace around the key is not part of it
  LlmConfig c = config();
  c.api_key_env = var;
  server.push({.text = "a"});
  server.push({.text = "b"});
  ASSERT_TRUE(client(c)->chat(hello()));
  ::unsetenv(var.c_str());
  ASSERT_TRUE(client(c)->chat(hello()));  // the variable is read when the client is made
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  const std::string name = anthropic() ? "x-api-key" : "authorization";
  EXPECT_EQ(reqs[0].headers[name], anthropic() ? "sk-abc-123" : "Bearer sk-abc-123");
  EXPECT_EQ(reqs[1].headers.count(name), 0u);
  EXPECT_EQ(reqs[1].headers.count("x-api-key") + reqs[1].headers.count("authorization"), 0u);
}

TEST_P(LlmProtocolTest, DeadlineEndsASlowReply) {
  LlmConfig c = config();
  c.timeout_s = 0.4;
  server.push({.text = "too late", .delay_s = 5});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(c)->chat(hello());
  const double took = since(t0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_timeout");
  EXPECT_GE(took, 0.35);
  EXPECT_LT(took, 1.0);
}

TEST_P(LlmProtocolTest, CancellationEndsASlowReplyQuickly) {
  server.push({.text = "never", .delay_s = 5});
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client()->chat(hello(), &cancel);
  const double took = since(t0);
  canceller.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_cancelled");
  EXPECT_LT(took, 0.15 + 0.2);
}

TEST_P(LlmProtocolTest, CancellationDuringBackoff) {
  LlmConfig c = config();
  c.backoff_initial_s = 5;
  c.backoff_max_s = 5;
  server.push({.text = "busy", .status = 503});
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(c)->chat(hello(), &cancel);
  canceller.join();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_cancelled");
  EXPECT_LT(since(t0), 0.5);
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(LlmProtocolTest, RetryAfterPastTheDeadlineFailsAtOnce) {
  LlmConfig c = config();
  c.timeout_s = 2;
  server.push({.text = "come back in an hour", .status = 429, .headers = {{"Retry-After", "3600"}}});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_timeout");
  EXPECT_NE(r.error().message.find("429"), std::string::npos) << r.error().message;
  EXPECT_LT(since(t0), 1.0);
}

// Answers that are not the protocol are retried (test_agent_llm_faults.cpp); with no retries
// left, the call fails at once with nkia_llm_protocol.
TEST_P(LlmProtocolTest, NotJsonIsAProtocolError) {
  LlmConfig c = config();
  c.max_retries = 0;
  server.push({.raw_body = "not json"});
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_protocol");
  EXPECT_NE(r.error().message.find("not JSON: not json"), std::string::npos) << r.error().message;
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(LlmProtocolTest, WrongShapeIsAProtocolError) {
  server.push({.raw_body = R"({"choices": 5, "content": "nope", "usage": "many"})"});
  server.push({.raw_body = R"([1, 2, 3])"});
  LlmConfig c = config();
  c.max_retries = 0;
  auto client_ = client(c);
  for (int i = 0; i < 2; ++i) {
    auto r = client_->chat(hello());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "nkia_llm_protocol");
  }
}

TEST_P(LlmProtocolTest, HostileNestingIsAProtocolErrorNotACrash) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  server.push({.raw_body = R"({"choices": [{"message": {"content": "x"}}], "content": [], "extra": )" + deep + "}"});
  LlmConfig c = config();
  c.max_retries = 0;
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_protocol");

  // Deep arguments stored in the history are sent as {} to Anthropic and raw to OpenAI.
  server.push({.text = "ok"});
  ChatRequest req = hello();
  Message assistant{Role::kAssistant, "", {{"c1", "compile", "{\"a\": " + deep + "}"}}, "", "", false};
  req.messages.push_back(assistant);
  req.messages.push_back({Role::kTool, "bad", {}, "c1", "compile", true});
  auto ok = client()->chat(req);
  ASSERT_TRUE(ok) << ok.error().format();
  const json b = server.requests().at(1).body;
  if (anthropic()) {
    EXPECT_EQ(b["messages"][1]["content"][0]["input"], json::object());
  } else {
    EXPECT_EQ(b["messages"][2]["tool_calls"][0]["function"]["arguments"].get<std::string>().size(), deep.size() + 7);
  }
}

TEST_P(LlmProtocolTest, Refusal) {
  server.push({.text = "I cannot help with that.", .stop_reason = "refusal"});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->stop_reason, "refusal");
  EXPECT_EQ(r->text, "I cannot help with that.");
}

TEST_P(LlmProtocolTest, MaxTokens) {
  server.push({.text = "a long answer that stops", .stop_reason = "max_tokens"});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->stop_reason, "max_tokens");
  EXPECT_EQ(r->text, "a long answer that stops");
}

TEST_P(LlmProtocolTest, UsageAddsUp) {
  server.push({.text = "one", .input_tokens = 7, .output_tokens = 11});
  server.push({.text = "two", .input_tokens = 5, .output_tokens = 13});
  auto c = client();
  Usage total;
  for (int i = 0; i < 2; ++i) {
    auto r = c->chat(hello());
    ASSERT_TRUE(r) << r.error().format();
    total += r->usage;
  }
  EXPECT_EQ(total.input_tokens, 12);
  EXPECT_EQ(total.output_tokens, 24);
}

TEST_P(LlmProtocolTest, EmptyScriptFailsLoudly) {
  LlmConfig c = config();
  c.max_retries = 0;
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_retries");
  EXPECT_NE(r.error().message.find("script ran out"), std::string::npos) << r.error().message;
}

TEST_P(LlmProtocolTest, ConnectionRefusedIsRetriedThenFails) {
  // A socket bound but not listening: connecting to its port is refused, and no other process can
  // take the port meanwhile.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  LlmConfig c = config();
  c.base_url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1";
  c.max_retries = 2;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(c)->chat(hello());
  ::close(fd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_retries");
  EXPECT_NE(r.error().message.find("3 attempts"), std::string::npos) << r.error().message;
  EXPECT_LT(since(t0), 2.0);
}

INSTANTIATE_TEST_SUITE_P(BothProtocols, LlmProtocolTest, testing::all_modes(), mode_name);

// Streaming only: a stream cut before its final events.
class LlmTruncationTest : public LlmProtocolTest {};

TEST_P(LlmTruncationTest, TruncatedTextKeepsWhatCame) {
  server.push({.text = "The first part of a reply that never finishes", .truncate = true});
  std::string seen;
  auto r = client()->chat(hello(), nullptr, [&](std::string_view d) { seen += d; });
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->stop_reason, "truncated");
  EXPECT_EQ(r->text, "The first part of a reply that never finishes");
  EXPECT_EQ(seen, r->text);
  EXPECT_EQ(r->attempts, 1);  // not retried: the text already went to the display
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_P(LlmTruncationTest, ACallCutInItsArgumentsIsDropped) {
  server.push({.text = "Two calls.",
               .tool_calls = {{"c1", "compile", R"({"path": "a.py"})"}, {"c2", "compile", R"({"path": "b.py"})"}},
               .truncate = true});
  auto r = client()->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->stop_reason, "truncated");
  EXPECT_EQ(r->text, "Two calls.");
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_EQ(r->tool_calls[0].id, "c1");
  EXPECT_EQ(r->tool_calls[0].parsed(), json({{"path", "a.py"}}));
}

INSTANTIATE_TEST_SUITE_P(Streaming, LlmTruncationTest, ::testing::Values(Mode{"openai", true}, Mode{"anthropic", true}),
                         mode_name);

// Hand-written event streams: errors inside a 200 stream.
using LlmStreamErrorTest = MockLlmTest;

TEST_F(LlmStreamErrorTest, AnthropicOverloadedEventIsRetried) {
  LlmConfig c = config_for("anthropic", true);
  server.push(
      {.raw_body =
           "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n"
           "event: error\ndata: "
           "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
       .raw_content_type = "text/event-stream"});
  server.push({.text = "after the overload"});
  auto r = client(c)->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "after the overload");
  EXPECT_EQ(r->attempts, 2);
}

TEST_F(LlmStreamErrorTest, AnthropicOtherErrorEventFails) {
  LlmConfig c = config_for("anthropic", true);
  server.push(
      {.raw_body =
           "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad "
           "tool schema\"}}\n\n",
       .raw_content_type = "text/event-stream"});
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_http");
  EXPECT_NE(r.error().message.find("bad tool schema"), std::string::npos) << r.error().message;
  EXPECT_EQ(server.request_count(), 1u);
}

// An error the server reports in the stream fails the call; a garbled chunk after reply text is
// the stream breaking: the reply so far, truncated, not retried.
TEST_F(LlmStreamErrorTest, OpenAiErrorChunkAndGarbageChunk) {
  LlmConfig c = config_for("openai", true);
  server.push({.raw_body = "data: {\"error\":{\"message\":\"context length exceeded\"}}\n\n",
               .raw_content_type = "text/event-stream"});
  server.push({.raw_body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {not json\n\n",
               .raw_content_type = "text/event-stream"});
  auto cl = client(c);
  auto r = cl->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_http");
  EXPECT_NE(r.error().message.find("context length exceeded"), std::string::npos) << r.error().message;
  EXPECT_EQ(server.request_count(), 1u);
  r = cl->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "hi");
  EXPECT_EQ(r->stop_reason, "truncated");
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(LlmStreamErrorTest, StreamWithoutFinalEventButFinishReason) {
  // The finish chunk came but the connection ended before [DONE]: the reply is whole.
  LlmConfig c = config_for("openai", true);
  server.push({.raw_body =
                   "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"all\"},\"finish_reason\":null}]}\n\n"
                   "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
               .raw_content_type = "text/event-stream"});
  auto r = client(c)->chat(hello());
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "all");
  EXPECT_EQ(r->stop_reason, "end_turn");
}

TEST(LlmClient, ConfigIsChecked) {
  LlmConfig c;
  c.name = "x";
  c.provider = "openai";
  c.base_url = "http://127.0.0.1:1/v1";
  c.model = "m";
  EXPECT_TRUE(make_llm_client(c));
  for (auto mutate : std::vector<std::function<void(LlmConfig&)>>{
           [](LlmConfig& k) { k.provider = "gemini"; }, [](LlmConfig& k) { k.base_url = "127.0.0.1:8000"; },
           [](LlmConfig& k) { k.model = ""; }, [](LlmConfig& k) { k.timeout_s = 0; },
           [](LlmConfig& k) { k.max_retries = -1; }, [](LlmConfig& k) { k.max_tokens = 0; }}) {
    LlmConfig bad = c;
    mutate(bad);
    auto r = make_llm_client(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "nkia_llm_config");
  }
}

// ---------------------------------------------------------------------------------------------
// The HTTP layer's own limits

TEST(Http, BodyIsCapped) {
  MockLlmServer server;
  server.push({.raw_body = std::string(100000, 'x')});
  HttpRequest req;
  req.url = server.base_url() + "/chat/completions";
  req.body = "{}";
  req.timeout_s = 5;
  req.max_body_bytes = 4096;
  HttpResponse r = http_post(req);
  EXPECT_EQ(r.outcome, HttpOutcome::kTooLarge);
  EXPECT_LE(r.body.size(), 4096u);
}

TEST(Http, CancelWhileTheServerIsSilent) {
  MockLlmServer server;
  server.push({.text = "late", .delay_s = 5});
  std::atomic<bool> cancel{false};
  HttpRequest req;
  req.url = server.base_url() + "/chat/completions";
  req.body = "{}";
  req.timeout_s = 10;
  req.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  HttpResponse r = http_post(req);
  const double took = since(t0);
  t.join();
  EXPECT_EQ(r.outcome, HttpOutcome::kCancelled);
  EXPECT_LT(took, 0.1 + 0.15);
}

TEST(Http, StatusHeadersAndBody) {
  MockLlmServer server;
  server.push({.text = "nope", .status = 418, .headers = {{"Retry-After", "7"}, {"X-Mock", "yes"}}});
  HttpRequest req;
  req.url = server.base_url() + "/messages";
  req.headers = {"Content-Type: application/json", "X-Test: 1"};
  req.body = R"({"model": "m"})";
  HttpResponse r = http_post(req);
  ASSERT_EQ(r.outcome, HttpOutcome::kOk) << r.error;
  EXPECT_EQ(r.status, 418);
  EXPECT_EQ(r.header("retry-after"), "7");
  EXPECT_EQ(r.header("x-mock"), "yes");
  EXPECT_NE(r.body.find("nope"), std::string::npos);
  EXPECT_EQ(server.requests().at(0).headers["x-test"], "1");
  EXPECT_EQ(server.requests().at(0).body["model"], "m");
}

}  // namespace
}  // namespace nki_agent
