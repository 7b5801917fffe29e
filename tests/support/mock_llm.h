// tests/support/mock_llm.h — a loopback LLM server for tests: OpenAI chat completions and the
// Anthropic Messages API, answering from a script.
//
// The server listens on 127.0.0.1 on an ephemeral port and serves POST /v1/chat/completions and
// POST /v1/messages. Each request takes the next MockReply from one FIFO shared by both endpoints
// and answers it in the dialect of the endpoint: JSON, or Server-Sent Events when the request says
// "stream": true. Streams are written in small pieces with short pauses (text in three parts, tool
// arguments in two, every event split mid-line), so that clients see lines cut across network
// reads. A request that finds the script empty gets HTTP 500 with a body saying so, so a test
// that calls too often fails loudly. Every request's path, headers and JSON body are recorded.
// Faults are scripted too: any status with any body (an HTML error page from a proxy, a 200 that
// is not JSON), a stream cut before its final events, an answer cut in the middle of its body by
// a close or a connection reset.
//
// httplib.h stays inside mock_llm.cpp: tests that include this header need not link it twice or
// care about its clash with Eigen (docs DEPENDENCIES.md).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nki_agent::testing {

struct MockToolCall {
  std::string id{};  // generated ("call_mock_N" / "toolu_mock_N") when empty
  std::string name{};
  std::string arguments{};  // raw text, sent as written (may be malformed JSON)
};

struct MockReply {
  std::string text{};
  std::vector<MockToolCall> tool_calls{};
  // "end_turn" (the default, or "tool_use" when there are calls), "tool_use", "max_tokens",
  // "refusal" (OpenAI: the text goes out as message.refusal).
  std::string stop_reason{};
  int status = 200;                                   // not 2xx: an error body {"error": {"message": text}} is sent
  std::string raw_body{};                             // when set, sent verbatim as the body, with raw_content_type
  std::string raw_content_type = "application/json";  // "text/event-stream": a hand-written stream
  std::map<std::string, std::string> headers{};       // extra response headers, e.g. Retry-After
  // Streaming only: the stream stops before its final events (after the text and the first half
  // of the last tool call's arguments) and the connection is dropped.
  bool truncate = false;
  // Any answer (JSON, stream, raw body, error): the status line, the headers (with the whole
  // body's Content-Length) and the body's first cut_after_bytes bytes are sent, then the
  // connection is closed, or reset (TCP RST) when reset is set. -1: the whole answer is sent.
  long cut_after_bytes = -1;
  bool reset = false;
  double delay_s = 0;  // wait this long before answering (timeouts, cancellation)
  int input_tokens = 10;
  int output_tokens = 20;
};

struct MockRequest {
  std::string path;                            // "/v1/chat/completions" or "/v1/messages"
  std::map<std::string, std::string> headers;  // names lower-cased
  nlohmann::json body;                         // the parsed body; discarded when not JSON
};

class MockLlmServer {
 public:
  MockLlmServer();   // starts listening; throws std::runtime_error when it cannot
  ~MockLlmServer();  // stops, cutting short any reply still waiting out its delay
  MockLlmServer(const MockLlmServer&) = delete;
  MockLlmServer& operator=(const MockLlmServer&) = delete;

  void push(MockReply reply);
  std::vector<MockRequest> requests() const;
  size_t request_count() const;
  size_t replies_left() const;
  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT/v1"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nki_agent::testing
