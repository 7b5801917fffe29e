// tests/support/mock_llm_fixture.h — GoogleTest fixtures for LLM clients against the loopback mock
// server (mock_llm.h): a server per test, and clients pointed at it with tiny backoffs, so that
// retries cost milliseconds. LlmProtocolTest runs once per protocol and mode (Mode).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>

#include "agent/llm.h"
#include "support/mock_llm.h"

namespace nki_agent::testing {

struct Mode {
  std::string provider;  // "openai" | "anthropic"
  bool stream;
};

inline void PrintTo(const Mode& m, std::ostream* os) {
  *os << m.provider << (m.stream ? " streaming" : " JSON");
}

inline std::string mode_name(const ::testing::TestParamInfo<Mode>& i) {
  return i.param.provider + (i.param.stream ? "_stream" : "_json");
}

// The four modes: both protocols, streaming and whole replies.
inline auto all_modes() {
  return ::testing::Values(Mode{"openai", false}, Mode{"openai", true}, Mode{"anthropic", false},
                           Mode{"anthropic", true});
}

class MockLlmTest : public ::testing::Test {
 protected:
  LlmConfig config_for(const std::string& provider, bool stream) const {
    LlmConfig c;
    c.name = "mock";
    c.provider = provider;
    c.base_url = server.base_url();
    c.model = "mock-model";
    c.api_key_env = "";
    c.stream = stream;
    c.timeout_s = 10;
    c.connect_timeout_s = 2;
    c.max_retries = 3;
    c.backoff_initial_s = 0.01;
    c.backoff_max_s = 0.04;
    return c;
  }
  std::unique_ptr<LlmClient> client(const LlmConfig& c) const {
    auto r = make_llm_client(c);
    EXPECT_TRUE(r) << (r ? "" : r.error().format());
    return r ? std::move(*r) : nullptr;
  }

  static ChatRequest hello() {
    ChatRequest req;
    req.system = "You write NKI kernels.";
    req.messages.push_back({Role::kUser, "Write a vector add.", {}, "", "", false});
    return req;
  }

  MockLlmServer server;
};

class LlmProtocolTest : public MockLlmTest, public ::testing::WithParamInterface<Mode> {
 protected:
  using MockLlmTest::client;
  LlmConfig config() const { return config_for(GetParam().provider, GetParam().stream); }
  std::unique_ptr<LlmClient> client() const { return client(config()); }
  bool anthropic() const { return GetParam().provider == "anthropic"; }
};

}  // namespace nki_agent::testing
