// Model endpoint configuration (agent/llm_config.h): the TOML file, the environment, flags, the
// key's variable, and what is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "agent/llm.h"
#include "agent/llm_config.h"

namespace nki_agent {
namespace {

class LlmConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("nkia_llm_config_" + std::to_string(::getpid()) + "_" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    env["HOME"] = (dir / "home").string();
    // Keys for the public APIs, so that configurations naming them load (NoKeyForAPublicApi…
    // takes them away).
    env["OPENAI_API_KEY"] = "sk-test-openai";
    env["ANTHROPIC_API_KEY"] = "sk-test-anthropic";
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string write(const std::string& name, const std::string& text) const {
    const auto p = dir / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  GetenvFn getenv_fn() const {
    return [this](const std::string& k) -> std::optional<std::string> {
      auto it = env.find(k);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  }
  Result<LlmConfig> load(const std::string& name, const std::string& path = "", const LlmOverrides& flags = {}) const {
    return load_llm_config(name, path, getenv_fn(), flags);
  }

  std::filesystem::path dir;
  std::map<std::string, std::string> env;
};

const char* kToml = R"(
[llm]
timeout_s = 120
max_retries = 2

[models.local-qwen]
provider = "openai"
base_url = "http://127.0.0.1:8000/v1"
model = "Qwen/Qwen2.5-Coder-32B"
api_key_env = ""
temperature = 0.2
max_tokens = 4096
stream = false
connect_timeout_s = 3
backoff_initial_s = 0.5
backoff_max_s = 8
price_input_per_mtok = 0.1
price_output_per_mtok = 0.4

[models."claude-sonnet"]
model = "claude-sonnet-4-5"
max_retries = 6

[agent]
something_else = "read by another part of nki-agent"
)";

TEST_F(LlmConfigTest, ModelTableFromFile) {
  auto c = load("local-qwen", write("c.toml", kToml));
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_EQ(c->name, "local-qwen");
  EXPECT_EQ(c->provider, "openai");
  EXPECT_EQ(c->base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(c->model, "Qwen/Qwen2.5-Coder-32B");
  EXPECT_EQ(c->api_key_env, "");
  EXPECT_DOUBLE_EQ(c->temperature, 0.2);
  EXPECT_EQ(c->max_tokens, 4096);
  EXPECT_FALSE(c->stream);
  EXPECT_DOUBLE_EQ(c->timeout_s, 120);  // from [llm]
  EXPECT_DOUBLE_EQ(c->connect_timeout_s, 3);
  EXPECT_EQ(c->max_retries, 2);
  EXPECT_DOUBLE_EQ(c->backoff_initial_s, 0.5);
  EXPECT_DOUBLE_EQ(c->backoff_max_s, 8);
  EXPECT_DOUBLE_EQ(c->price_output_per_mtok, 0.4);
  EXPECT_NEAR(c->cost_usd({1'000'000, 1'000'000}), 0.5, 1e-12);

  // Provider and base_url follow the model id when the table does not set them.
  auto claude = load("claude-sonnet", write("c.toml", kToml));
  ASSERT_TRUE(claude) << claude.error().format();
  EXPECT_EQ(claude->model, "claude-sonnet-4-5");
  EXPECT_EQ(claude->provider, "anthropic");
  EXPECT_EQ(claude->base_url, "https://api.anthropic.com/v1");
  EXPECT_EQ(claude->api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(claude->max_retries, 6);  // the model's table beats [llm]
}

TEST_F(LlmConfigTest, DefaultsByName) {
  auto gpt = load("gpt-4o");
  ASSERT_TRUE(gpt) << gpt.error().format();
  EXPECT_EQ(gpt->model, "gpt-4o");
  EXPECT_EQ(gpt->provider, "openai");
  EXPECT_EQ(gpt->base_url, "https://api.openai.com/v1");
  EXPECT_EQ(gpt->api_key_env, "OPENAI_API_KEY");
  EXPECT_DOUBLE_EQ(gpt->temperature, 0.7);
  EXPECT_TRUE(gpt->stream);

  auto claude = load("claude-opus-4");
  ASSERT_TRUE(claude);
  EXPECT_EQ(claude->provider, "anthropic");
  EXPECT_EQ(claude->base_url, "https://api.anthropic.com/v1");

  // A name with no table in the file is the model id.
  auto other = load("gpt-4.1-mini", write("c.toml", kToml));
  ASSERT_TRUE(other) << other.error().format();
  EXPECT_EQ(other->model, "gpt-4.1-mini");
  EXPECT_DOUBLE_EQ(other->timeout_s, 120);
}

TEST_F(LlmConfigTest, FileFromEnvironmentOrHome) {
  env["NKIA_CONFIG"] = write("elsewhere.toml", kToml);
  auto c = load("local-qwen");
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_EQ(c->model, "Qwen/Qwen2.5-Coder-32B");

  env.erase("NKIA_CONFIG");
  write("home/.config/nki-agent/config.toml", "[models.local-qwen]\nmodel = \"from-home\"\n");
  c = load("local-qwen");
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_EQ(c->model, "from-home");

  env["NKIA_CONFIG"] = (dir / "missing.toml").string();
  c = load("local-qwen");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "nkia_llm_config");
}

TEST_F(LlmConfigTest, EnvironmentThenFlagsWin) {
  const std::string path = write("c.toml", kToml);
  env["NKIA_LLM_BASE_URL"] = "http://10.0.0.5:9000/v1";
  env["NKIA_LLM_TEMPERATURE"] = "0.9";
  env["NKIA_LLM_MAX_TOKENS"] = "1000";
  env["NKIA_LLM_MODEL"] = "qwen-env";
  auto c = load("local-qwen", path);
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_EQ(c->base_url, "http://10.0.0.5:9000/v1");
  EXPECT_DOUBLE_EQ(c->temperature, 0.9);
  EXPECT_EQ(c->max_tokens, 1000);
  EXPECT_EQ(c->model, "qwen-env");

  LlmOverrides flags;
  flags.temperature = 0.0;
  flags.max_tokens = 64;
  flags.stream = true;
  flags.timeout_s = 5;
  flags.max_retries = 0;
  flags.model = "qwen-flag";
  flags.provider = "anthropic";
  flags.base_url = "http://127.0.0.1:1234/v1";
  flags.price_input_per_mtok = 3;
  flags.price_output_per_mtok = 15;
  c = load("local-qwen", path, flags);
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_DOUBLE_EQ(c->temperature, 0.0);
  EXPECT_EQ(c->max_tokens, 64);
  EXPECT_TRUE(c->stream);
  EXPECT_DOUBLE_EQ(c->timeout_s, 5);
  EXPECT_EQ(c->max_retries, 0);
  EXPECT_EQ(c->model, "qwen-flag");
  EXPECT_EQ(c->provider, "anthropic");
  EXPECT_EQ(c->base_url, "http://127.0.0.1:1234/v1");
  EXPECT_DOUBLE_EQ(c->price_output_per_mtok, 15);
  EXPECT_EQ(c->api_key_env, "");  // the file's setting stays

  env["NKIA_LLM_PROVIDER"] = "anthropic";
  auto e = load("some-model");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->provider, "anthropic");
  EXPECT_EQ(e->base_url, "http://10.0.0.5:9000/v1");

  env["NKIA_LLM_TEMPERATURE"] = "warm";
  e = load("some-model");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "nkia_llm_config");
}

TEST_F(LlmConfigTest, ApiKeyInFileIsRefused) {
  auto c = load("m", write("c.toml", "[models.m]\nmodel = \"gpt-4o\"\napi_key = \"sk-in-a-file-1234\"\n"));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "nkia_llm_config");
  EXPECT_NE(c.error().message.find("api_key"), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().format().find("sk-in-a-file-1234"), std::string::npos);
  EXPECT_EQ(c.error().loc.line, 3);
  // Also in a table of another model.
  c = load("other", write("c.toml", "[models.m]\napi_key = \"x\"\n"));
  ASSERT_FALSE(c);
}

TEST_F(LlmConfigTest, UnknownKeyAndWrongTypeAreRefused) {
  auto c = load("m", write("c.toml", "[models.m]\nmodel = \"gpt-4o\"\ntemprature = 0.3\n"));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "nkia_llm_config");
  EXPECT_NE(c.error().message.find("temprature"), std::string::npos) << c.error().message;

  c = load("m", write("c.toml", "[llm]\nmax_tokens = \"lots\"\n"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("max_tokens"), std::string::npos) << c.error().message;

  c = load("m", write("c.toml", "[models.m]\nprovider = \"gemini\"\n"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("gemini"), std::string::npos);

  c = load("m", write("c.toml", "[models.m\nmodel = 1\n"));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "nkia_llm_config");
}

TEST_F(LlmConfigTest, MissingExplicitFileIsRefused) {
  auto c = load("gpt-4o", (dir / "nope.toml").string());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "nkia_llm_config");
  EXPECT_NE(c.error().message.find("nope.toml"), std::string::npos);
}

TEST_F(LlmConfigTest, ApiKeyComesFromTheNamedVariable) {
  LlmConfig c;
  c.api_key_env = "MY_KEY";
  EXPECT_EQ(llm_api_key(c, getenv_fn()), "");
  env["MY_KEY"] = " sk-1 \n";
  EXPECT_EQ(llm_api_key(c, getenv_fn()), "sk-1");
  c.api_key_env = "";
  EXPECT_EQ(llm_api_key(c, getenv_fn()), "");
}

// A provider's public API without its key is refused when the configuration is loaded (and when a
// client is made), naming the variable to set: it is never called only to be turned away or, with
// no route to it, retried until the deadline.
TEST_F(LlmConfigTest, NoKeyForAPublicApiSaysWhatToSet) {
  env.erase("OPENAI_API_KEY");
  env.erase("ANTHROPIC_API_KEY");
  const std::vector<std::pair<std::string, std::string>> public_apis = {{"gpt-4o", "OPENAI_API_KEY"},
                                                                        {"claude-sonnet-4-5", "ANTHROPIC_API_KEY"}};
  for (const auto& [name, var] : public_apis) {
    SCOPED_TRACE(name);
    auto c = load(name);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, "nkia_llm_config");
    EXPECT_NE(c.error().message.find(var), std::string::npos) << c.error().format();
    EXPECT_NE(c.error().message.find("needs an API key"), std::string::npos) << c.error().format();
    EXPECT_NE(c.error().hint.find("export " + var), std::string::npos) << c.error().format();
    EXPECT_NE(c.error().hint.find("NKIA_LLM_BASE_URL"), std::string::npos) << c.error().format();
    EXPECT_NE(c.error().hint.find("--base-url"), std::string::npos) << c.error().format();
  }
  // An empty key is no key.
  env["OPENAI_API_KEY"] = "  ";
  EXPECT_FALSE(load("gpt-4o"));
  // The key, or a server of one's own, and the configuration loads.
  env["OPENAI_API_KEY"] = "sk-1";
  EXPECT_TRUE(load("gpt-4o"));
  env.erase("OPENAI_API_KEY");
  env["NKIA_LLM_BASE_URL"] = "http://127.0.0.1:8000/v1";
  EXPECT_TRUE(load("gpt-4o"));
  env.erase("NKIA_LLM_BASE_URL");
  LlmOverrides flags;
  flags.base_url = "http://127.0.0.1:8000/v1";
  EXPECT_TRUE(load("gpt-4o", "", flags));
  // The public URL named outright (any spelling of its host) still needs the key.
  flags.base_url = "https://API.OpenAI.com:443/v1/";
  EXPECT_FALSE(load("gpt-4o", "", flags));
  // A table that reads the key from no variable says so.
  auto c = load("hosted", write("c.toml", "[models.hosted]\nmodel = \"gpt-4o\"\napi_key_env = \"\"\n"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("api_key_env"), std::string::npos) << c.error().format();
  EXPECT_NE(c.error().hint.find("[models.hosted]"), std::string::npos) << c.error().format();
  EXPECT_FALSE(c.error().notes.empty());  // names the configuration file

  // make_llm_client refuses the same configuration (the key is read from the process environment).
  LlmConfig direct;
  direct.name = "direct";
  direct.provider = "anthropic";
  direct.base_url = "https://api.anthropic.com/v1";
  direct.model = "claude-sonnet-4-5";
  direct.api_key_env = "NKIA_TEST_UNSET_KEY";
  auto client = make_llm_client(direct);
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code, "nkia_llm_config");
  EXPECT_NE(client.error().message.find("NKIA_TEST_UNSET_KEY"), std::string::npos) << client.error().format();
}

}  // namespace
}  // namespace nki_agent
