// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// LLM endpoint faults (agent/llm_client.cpp): a 200 whose body is not JSON or lacks the protocol's
// fields, an HTML page from a proxy (as a 200 and as a 502), an answer cut in the middle of its body
// by a close or a connection reset, and streams that break before or after reply text. Over both
// protocols, streaming and not, against the loopback mock server: each fault is retried and a
// later reply gets through; a fault that persists fails the call with its clear Diagnostic, within
// the deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "agent/llm.h"
#include "support/mock_llm.h"
#include "support/mock_llm_fixture.h"

namespace nki_agent {
namespace {

using testing::MockLlmTest;
using testing::MockReply;
using testing::Mode;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string html_page(const std::string& title) {
  return "<!DOCTYPE html>\n<html>\n<head><title>" + title + "</title></head>\n<body>\n<center><h1>" + title +
         "</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n";
}

// A reply long enough that a cut at 12 bytes lands inside the first line of any answer.
const std::string kLongText = "A reply long enough to be cut in the middle of its body, several times over.";

struct Fault {
  std::string name;
  MockReply reply;
  std::string code;      // the call's code when the fault persists
  std::string fragment;  // what its message says of the fault
};

std::vector<Fault> faults() {
  return {
      {"not_json", {.raw_body = "upstream says hello"}, "nkia_llm_protocol", "not JSON: upstream says hello"},
      {"html_200",
       {.raw_body = html_page("Sign in to the network"), .raw_content_type = "text/html"},
       "nkia_llm_protocol",
       "an HTML page titled \"Sign in to the network\" (a proxy or gateway answered"},
      {"no_fields",
       {.raw_body = R"({"id": "x-1", "object": "chat.completion", "model": "mock-model"})"},
       "nkia_llm_protocol",
       "the answer has no"},
      {"html_502",
       {.status = 502, .raw_body = html_page("502 Bad Gateway"), .raw_content_type = "text/html"},
       "nkia_llm_retries",
       "HTTP 502: an HTML page titled \"502 Bad Gateway\""},
      {"reset_mid_body", {.text = kLongText, .cut_after_bytes = 12, .reset = true}, "nkia_llm_retries", "reset"},
      {"closed_mid_body", {.text = kLongText, .cut_after_bytes = 12}, "nkia_llm_retries", "closed"},
  };
}

using FaultParam = std::tuple<Mode, size_t>;  // the mode, an index into faults()

class LlmFaultTest : public MockLlmTest, public ::testing::WithParamInterface<FaultParam> {
 protected:
  const Mode& mode() const { return std::get<0>(GetParam()); }
  Fault fault() const { return faults().at(std::get<1>(GetParam())); }
  LlmConfig config() const { return config_for(mode().provider, mode().stream); }
};

std::string fault_name(const ::testing::TestParamInfo<FaultParam>& i) {
  const Mode& m = std::get<0>(i.param);
  return m.provider + (m.stream ? "_stream_" : "_json_") + faults().at(std::get<1>(i.param)).name;
}

TEST_P(LlmFaultTest, RetriedUntilAReplyGetsThrough) {
  server.push(fault().reply);
  server.push(fault().reply);
  server.push({.text = "recovered"});
  std::string shown;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(config())->chat(hello(), nullptr, [&](std::string_view d) { shown += d; });
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "recovered");
  EXPECT_EQ(r->stop_reason, "end_turn");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(shown, "recovered");  // nothing of the faulty answers reached the display
  EXPECT_LT(since(t0), 2.0);
}

TEST_P(LlmFaultTest, PersistentFaultFailsClearlyAfterTheLastRetry) {
  LlmConfig c = config();
  c.max_retries = 2;
  for (int i = 0; i < 3; ++i) server.push(fault().reply);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, fault().code) << r.error().format();
  EXPECT_NE(r.error().message.find("after 3 attempts"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(fault().fragment), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(server.base_url()), std::string::npos) << r.error().message;
  EXPECT_FALSE(r.error().hint.empty());
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(server.replies_left(), 0u);
  EXPECT_LT(since(t0), 2.0);
}

TEST_P(LlmFaultTest, PersistentFaultEndsAtTheDeadline) {
  LlmConfig c = config();
  c.timeout_s = 0.3;
  c.max_retries = 100;
  c.backoff_initial_s = 0.02;
  c.backoff_max_s = 0.02;
  for (int i = 0; i < 60; ++i) server.push(fault().reply);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client(c)->chat(hello());
  const double took = since(t0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_timeout") << r.error().format();
  EXPECT_NE(r.error().message.find("last: "), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(fault().fragment), std::string::npos) << r.error().message;
  EXPECT_GE(server.request_count(), 2u);
  EXPECT_LT(took, c.timeout_s + 0.3);
}

INSTANTIATE_TEST_SUITE_P(BothProtocols, LlmFaultTest,
                         ::testing::Combine(testing::all_modes(), ::testing::Range(size_t{0}, faults().size())),
                         fault_name);

// Hand-written streams that break before or after reply text.
class LlmStreamBreakTest : public MockLlmTest, public ::testing::WithParamInterface<std::string> {
 protected:
  bool anthropic() const { return GetParam() == "anthropic"; }
  LlmConfig config() const { return config_for(GetParam(), true); }
  // The stream's opening event, which carries no reply text.
  std::string opening() const {
    return anthropic()
               ? "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"mock-model\","
                 "\"usage\":{\"input_tokens\":3}}}\n\n"
               : "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
  }
  std::string text_event(const std::string& text) const {
    return anthropic() ? "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                         "{\"type\":\"text_delta\",\"text\":\"" +
                             text + "\"}}\n\n"
                       : "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
  }
  static MockReply stream(std::string body) {
    return {.raw_body = std::move(body), .raw_content_type = "text/event-stream"};
  }
};

TEST_P(LlmStreamBreakTest, BrokenBeforeAnyTextIsRetried) {
  server.push(stream(opening()));                          // ends without its final event
  server.push(stream(opening() + "data: {not json\n\n"));  // a garbled event
  MockReply reset = stream(opening() + text_event("never shown"));
  reset.cut_after_bytes = static_cast<long>(opening().size() + 10);  // inside the text event's line
  reset.reset = true;
  server.push(reset);
  MockReply closed = reset;
  closed.reset = false;
  server.push(closed);
  server.push({.text = "recovered"});
  LlmConfig c = config();
  c.max_retries = 4;
  std::string shown;
  auto r = client(c)->chat(hello(), nullptr, [&](std::string_view d) { shown += d; });
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->text, "recovered");
  EXPECT_EQ(r->attempts, 5);
  EXPECT_EQ(shown, "recovered");
}

TEST_P(LlmStreamBreakTest, BrokenBeforeAnyTextEveryTimeFails) {
  LlmConfig c = config();
  c.max_retries = 1;
  server.push(stream(opening()));
  server.push(stream(opening() + "data: {not json\n\n"));
  auto r = client(c)->chat(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_llm_protocol") << r.error().format();
  EXPECT_NE(r.error().message.find("after 2 attempts"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("before any reply text"), std::string::npos) << r.error().message;
}

// After reply text the stream is the reply: what was shown is kept, truncated, and not asked for
// again (a second reply would follow the first on the display).
TEST_P(LlmStreamBreakTest, BrokenAfterTextIsTheReplySoFar) {
  std::vector<MockReply> breaks;
  MockReply closed = stream(opening() + text_event("Hello") + text_event(" world"));
  closed.cut_after_bytes = static_cast<long>(opening().size() + text_event("Hello").size() + 10);
  breaks.push_back(closed);
  breaks.push_back(stream(opening() + text_event("Hello") + "data: {not json\n\n"));
  if (anthropic())
    breaks.push_back(stream(opening() + text_event("Hello") +
                            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                            "\"message\":\"Overloaded\"}}\n\n"));
  for (size_t i = 0; i < breaks.size(); ++i) {
    SCOPED_TRACE(i);
    server.push(breaks[i]);
    server.push({.text = "a second reply that must not be asked for"});
    std::string shown;
    auto r = client(config())->chat(hello(), nullptr, [&](std::string_view d) { shown += d; });
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(r->text, "Hello");
    EXPECT_EQ(r->stop_reason, "truncated");
    EXPECT_EQ(r->attempts, 1);
    EXPECT_EQ(shown, "Hello");
    EXPECT_EQ(server.replies_left(), 1u);
    auto drain = client(config())->chat(hello());  // takes the unused reply off the script
    ASSERT_TRUE(drain) << drain.error().format();
  }
}

INSTANTIATE_TEST_SUITE_P(Streaming, LlmStreamBreakTest, ::testing::Values("openai", "anthropic"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nki_agent
