// No host variable reaches anything a kernel's run produces, through every command that runs
// kernels: `run`, `verify`, a scripted `solve` (its compile and verify tools, what goes to the
// model, the trajectory, the SFT export) and `bench` (its store and its files). Canary variables,
// an API key among them, are set in this process; the nki-agent processes inherit them, as they
// would inherit a user's shell. The kernels read the environment and put what they find into their
// printed text and their error messages.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/cli_runner.h"
#include "support/mock_llm.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::MockLlmServer;
using testing::MockReply;
using testing::MockToolCall;

const fs::path kSource = NKIA_SOURCE_DIR;
const fs::path kAdd = kSource / "tests" / "tasks" / "add_fp32";

struct Canary {
  const char* name;
  const char* value;
};
constexpr Canary kCanaries[] = {
    {"NKIA_CANARY_API_KEY", "sk-canary-api-key-5be81d"},  // the model's key in the config below
    {"ANTHROPIC_API_KEY", "sk-ant-canary-a61f02"},
    {"OPENAI_API_KEY", "sk-oai-canary-9c3e77"},
    {"NKIA_CANARY_SECRET", "canary-secret-d0c4b1"},
};

// Reads the environment through a module the static policy lets by (verify runs the kernel), and
// puts it everywhere a tool result can carry it.
const char* kLeakKernel = R"py(import logging

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

_os = getattr(logging, "o" + "s")
_env = dict(getattr(_os, "env" + "iron"))
print("environment seen by the kernel:", _env)


@nki.jit
def kernel(x, y):
    raise ValueError("environment: " + repr(_env))
)py";

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

CliRun cli(const std::string& args) {
  return testing::run_cli(args, testing::Stderr::kMerge);
}

std::string shared_cache() {
  return (fs::path(NKIA_CLI).parent_path() / "test-cache" / "references").string();
}

class AgentSecrets : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const Canary& c : kCanaries) ::setenv(c.name, c.value, 1);
  }
  static void TearDownTestSuite() {
    for (const Canary& c : kCanaries) ::unsetenv(c.name);
  }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nkia-secrets-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "leak.py") << kLeakKernel;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // No canary value in `text`, which came from `where`.
  static void expect_clean(const std::string& text, const std::string& where) {
    for (const Canary& c : kCanaries)
      EXPECT_EQ(text.find(c.value), std::string::npos) << where << " holds " << c.name << ":\n" << text.substr(0, 4000);
  }
  // Every file under `root` (a store, trajectories, exports).
  static void expect_clean_tree(const fs::path& root) {
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().filename() != "leak.py") expect_clean(read_all(e.path()), e.path().string());
  }

  fs::path dir_;
};

MockReply tool(const std::string& name, const std::string& kernel) {
  MockReply r;
  r.tool_calls.push_back(
      MockToolCall{"", name, kernel.empty() ? "{}" : nlohmann::json({{"kernel_code", kernel}}).dump()});
  return r;
}

TEST_F(AgentSecrets, RunAndVerifyShowNoHostVariable) {
  auto run = cli("--json run " + (dir_ / "leak.py").string() + " --entry kernel -r 'x=float32[128,512]' -r " +
                 "'y=float32[128,512]' --out " + (dir_ / "out").string());
  EXPECT_NE(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("environment"), std::string::npos) << run.out;  // the kernel did read it
  EXPECT_NE(run.out.find("C.UTF-8"), std::string::npos) << run.out;      // the worker's own locale
  expect_clean(run.out, "run");

  auto verify = cli("--json verify --task " + kAdd.string() + " " + (dir_ / "leak.py").string() + " --cache " +
                    shared_cache() + " --no-result-cache");
  EXPECT_NE(verify.exit_code, 0) << verify.out;
  EXPECT_NE(verify.out.find("kernel_error"), std::string::npos) << verify.out;
  expect_clean(verify.out, "verify");
}

TEST_F(AgentSecrets, ASolveSendsNoHostVariableToTheModelOrItsRecords) {
  MockLlmServer server;
  server.push(tool("compile", kLeakKernel));
  server.push(tool("verify", kLeakKernel));
  for (int i = 0; i < 4; ++i) server.push(tool("submit", ""));
  const fs::path config = dir_ / "models.toml";
  std::ofstream(config) << "[models.local]\nprovider = \"anthropic\"\nbase_url = \"" << server.base_url()
                        << "\"\nmodel = \"local-model\"\napi_key_env = \"NKIA_CANARY_API_KEY\"\n";
  const fs::path traj = dir_ / "solve.jsonl";
  auto r = cli("--json solve --task " + kAdd.string() + " --model local --config " + config.string() +
               " --max-turns 3 --trajectory " + traj.string() + " -o " + (dir_ / "best.py").string() + " --cache " +
               shared_cache());
  expect_clean(r.out, "solve's output");
  ASSERT_TRUE(fs::exists(traj)) << r.out;
  const std::string t = read_all(traj);
  EXPECT_NE(t.find("environment"), std::string::npos) << "the tools never ran the kernel:\n" << t.substr(0, 2000);
  expect_clean(t, "the trajectory");

  // What went to the model: the key only in its header, nothing of the host in any body.
  const auto requests = server.requests();
  ASSERT_GE(requests.size(), 2u);
  for (const auto& req : requests) {
    expect_clean(req.body.dump(), "a request body");
    auto key = req.headers.find("x-api-key");
    ASSERT_NE(key, req.headers.end());
    EXPECT_EQ(key->second, "sk-canary-api-key-5be81d");
  }

  const fs::path sft = dir_ / "sft.jsonl";
  auto x = cli("--json export-sft " + traj.string() + " -o " + sft.string());
  ASSERT_EQ(x.exit_code, 0) << x.out;
  expect_clean(read_all(sft), "the SFT export");
  expect_clean_tree(dir_);
}

TEST_F(AgentSecrets, ABenchStoresNoHostVariable) {
  // One task whose baseline is the leaking kernel: bench verifies it and stores the failure.
  const fs::path tasks = dir_ / "tasks" / "leak_add";
  fs::create_directories(tasks);
  for (const auto& e : fs::directory_iterator(kAdd)) fs::copy(e.path(), tasks / e.path().filename());
  fs::copy_file(dir_ / "leak.py", tasks / "baseline.py", fs::copy_options::overwrite_existing);
  const fs::path out = dir_ / "bench-out";
  auto r = cli("--json bench --tasks " + (dir_ / "tasks").string() + " --db " + (dir_ / "b.sqlite").string() +
               " --out " + out.string() + " --cache " + shared_cache());
  expect_clean(r.out, "bench's output");
  EXPECT_NE(r.out.find("\"tasks\""), std::string::npos) << r.out;
  expect_clean_tree(dir_);
}

}  // namespace
}  // namespace nki_agent
