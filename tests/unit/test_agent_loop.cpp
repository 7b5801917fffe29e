// The agent loop end to end on real tasks through the real tools, against a loopback model server
// (tests/support/mock_llm.h) speaking both protocols with scripted replies: compile error → fix →
// mismatch → fix → pass; malformed tool arguments; a reply that carries its kernel in text; a
// truncated stream; a refusal; an endpoint that keeps failing, and one whose faults are retried;
// single-shot; the router; the optimisation turns; trajectories. Then `nki-agent bench`: the
// baseline run, the summary, --resume after a kill, and tasks interrupted by a failing endpoint;
// and a model with neither key nor base URL.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "agent/bench.h"
#include "agent/loop.h"
#include "agent/sft.h"
#include "agent/store.h"
#include "agent/tools.h"
#include "support/cli_runner.h"
#include "support/mock_llm.h"
#include "support/shared_service.h"
#include "support/test_files.h"
#include "tasks/speed_cost.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;
using testing::MockLlmServer;
using testing::MockReply;
using testing::MockToolCall;
using testing::read_text;
using testing::shared_cache;

const fs::path kSource = NKIA_SOURCE_DIR;
const fs::path kL1_001 = kSource / "tasks" / "nkibench" / "level1" / "L1_001_matmul_small_fp32";
const fs::path kAdd = kSource / "tests" / "tasks" / "add_fp32";

std::string args_with(const std::string& source) {
  return nlohmann::json({{"kernel_code", source}}).dump();
}

MockReply call(const std::string& tool, const std::string& arguments, const std::string& text = "") {
  MockReply r;
  r.text = text;
  r.tool_calls.push_back(MockToolCall{"", tool, arguments});
  return r;
}

MockReply say(const std::string& text) {
  MockReply r;
  r.text = text;
  return r;
}

LlmConfig mock_config(const MockLlmServer& server, const std::string& provider, const std::string& name = "mock") {
  LlmConfig c;
  c.name = name;
  c.provider = provider;
  c.base_url = server.base_url();
  c.model = name + "-model";
  c.api_key_env = "NKIA_TEST_UNSET_KEY";
  c.max_retries = 1;
  c.backoff_initial_s = 0.01;
  c.backoff_max_s = 0.02;
  c.timeout_s = 30;
  c.price_input_per_mtok = 1.0;
  c.price_output_per_mtok = 2.0;
  return c;
}

std::vector<nlohmann::json> read_jsonl(const fs::path& p) {
  std::vector<nlohmann::json> v;
  std::ifstream f(p);
  std::string line;
  while (std::getline(f, line)) v.push_back(nlohmann::json::parse(line, nullptr, false));
  return v;
}

class AgentLoop : public testing::SharedServiceTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nkia-agent-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static VerifyOptions verify_options() {
    VerifyOptions vo;
    vo.reference.cache_dir = shared_cache();
    vo.parallel = 2;
    vo.speed = cost_speed_model();
    return vo;
  }

  struct Outcome {
    SolveResult result;
    std::vector<nlohmann::json> trajectory;
    std::vector<std::string> progress;
  };

  Outcome solve(const fs::path& task_dir, LlmClient& model, const SolveOptions& so, LlmClient* stronger = nullptr) {
    Outcome out;
    auto task = load_task(task_dir.string());
    EXPECT_TRUE(task) << task.error().format();
    if (!task) return out;
    AgentTools tools(*task, *service_, verify_options());
    auto traj = TrajectoryWriter::open((dir_ / "t.jsonl").string(), /*truncate=*/true);
    EXPECT_TRUE(traj);
    SolveHooks hooks;
    hooks.trajectory = traj->get();
    hooks.progress = [&out](const std::string& l) { out.progress.push_back(l); };
    auto r = solve_task(*task, tools, model, stronger, so, hooks);
    EXPECT_TRUE(r) << r.error().format();
    if (r) out.result = *r;
    traj->reset();
    out.trajectory = read_jsonl(dir_ / "t.jsonl");
    return out;
  }

  fs::path dir_;
};

// Compile error -> fix -> mismatch -> fix -> pass, on NKIBench's L1_001, over both protocols.
TEST_F(AgentLoop, CompileErrorThenMismatchThenPass) {
  for (const std::string provider : {"openai", "anthropic"}) {
    for (bool stream : {true, false}) {
      SCOPED_TRACE(provider + (stream ? " streaming" : " whole replies"));
      MockLlmServer server;
      const std::string bad_tile = read_text(kSource / "tests" / "agent" / "matmul_256_rows.py");
      const std::string no_tail = read_text(kSource / "tests" / "agent" / "matmul_no_tail.py");
      const std::string good = read_text(kL1_001 / "baseline.py");
      server.push(call("compile", args_with(bad_tile), "Here is a first kernel."));
      server.push(call("verify", args_with(no_tail), "Tiles of at most 128 rows now."));
      server.push(call("verify", args_with(good), "The contraction now covers K % 128."));
      LlmConfig cfg = mock_config(server, provider);
      cfg.stream = stream;
      auto client = make_llm_client(cfg);
      ASSERT_TRUE(client) << client.error().format();
      SolveOptions so;
      so.run_id = "e2e";
      Outcome o = solve(kL1_001, **client, so);
      const SolveResult& r = o.result;
      EXPECT_EQ(r.status, "passed");
      EXPECT_TRUE(r.passed);
      EXPECT_TRUE(r.compiled);
      EXPECT_EQ(r.turns, 3);
      EXPECT_EQ(r.tool_calls, 3);
      EXPECT_EQ(r.first_pass_turn, 3);
      EXPECT_EQ(r.kernel, good);
      EXPECT_EQ(r.last_kernel, good);
      EXPECT_EQ(r.outcome, kOutcomePassed);
      EXPECT_EQ(r.check, "");
      ASSERT_TRUE(r.verify);
      EXPECT_TRUE(r.verify->passed);
      EXPECT_DOUBLE_EQ(r.speedup, 1.0);  // the baseline itself
      EXPECT_EQ(r.usage.input_tokens, 30);
      EXPECT_EQ(r.usage.output_tokens, 60);
      EXPECT_NEAR(r.cost_usd, (30 * 1.0 + 60 * 2.0) * 1e-6, 1e-12);
      EXPECT_EQ(server.request_count(), 3u);
      EXPECT_EQ(server.replies_left(), 0u);

      // What the model read: the compile error's code and line, then the mismatch's numbers.
      auto reqs = server.requests();
      ASSERT_EQ(reqs.size(), 3u);
      const std::string second = reqs[1].body.dump();
      EXPECT_NE(second.find("err_num_partition_exceed_arch_limit"), std::string::npos) << second;
      EXPECT_NE(second.find("kernel.py:22"), std::string::npos) << second;
      const std::string third = reqs[2].body.dump();
      EXPECT_NE(third.find("mismatch"), std::string::npos) << third;
      EXPECT_NE(third.find("max abs error"), std::string::npos) << third;
      EXPECT_NE(third.find("ragged"), std::string::npos) << third;
      // Tools offered with schemas; the system prompt is there.
      const auto& body0 = reqs[0].body;
      ASSERT_TRUE(body0.contains("tools"));
      EXPECT_EQ(body0["tools"].size(), 5u);
      EXPECT_NE(body0.dump().find("compile"), std::string::npos);

      // The trajectory: start, three model calls, three tools, end — in order, with the kernels.
      std::vector<std::string> types;
      for (const auto& ev : o.trajectory) types.push_back(ev.value("type", "?"));
      EXPECT_EQ(types, (std::vector<std::string>{"start", "model_call", "tool", "model_call", "tool", "model_call",
                                                 "tool", "end"}));
      ASSERT_EQ(o.trajectory.size(), 8u);
      EXPECT_EQ(o.trajectory[0]["task"], "L1_001_matmul_small_fp32");
      EXPECT_EQ(o.trajectory[0]["prompt_version"], "v1");
      EXPECT_EQ(o.trajectory[0]["model"], "mock");
      EXPECT_FALSE(o.trajectory[0]["system"].get<std::string>().empty());
      EXPECT_EQ(o.trajectory[2]["name"], "compile");
      EXPECT_EQ(o.trajectory[2]["result"]["compiled"], false);
      EXPECT_EQ(o.trajectory[4]["result"]["check"], "mismatch");
      EXPECT_EQ(o.trajectory[6]["result"]["passed"], true);
      EXPECT_EQ(o.trajectory[7]["result"]["status"], "passed");
      EXPECT_EQ(o.trajectory[7]["kernel"], good);
      for (const auto& ev : o.trajectory) EXPECT_EQ(ev["run"], "e2e");

      // As an SFT record: system, task, then each reply with its tool call and the result read.
      auto sft = trajectory_to_sft(o.trajectory, SftOptions{});
      ASSERT_TRUE(sft) << sft.error().format();
      const auto& msgs = (*sft)["messages"];
      ASSERT_EQ(msgs.size(), 7u);  // the last tool result has no reply after it: dropped
      EXPECT_EQ(msgs[0]["role"], "system");
      EXPECT_EQ(msgs[1]["role"], "user");
      EXPECT_EQ(msgs[2]["role"], "assistant");
      EXPECT_EQ(msgs[2]["tool_calls"][0]["function"]["name"], "compile");
      EXPECT_EQ(msgs[2]["tool_calls"][0]["function"]["arguments"], args_with(bad_tile));
      EXPECT_EQ(msgs[3]["role"], "tool");
      EXPECT_EQ(msgs[3]["tool_call_id"], msgs[2]["tool_calls"][0]["id"]);
      EXPECT_NE(msgs[3]["content"].get<std::string>().find("err_num_partition_exceed_arch_limit"), std::string::npos);
      EXPECT_EQ(msgs[6]["tool_calls"][0]["function"]["arguments"], args_with(good));
      EXPECT_EQ((*sft)["tools"].size(), 5u);
      EXPECT_EQ((*sft)["metadata"]["passed"], true);
      EXPECT_EQ((*sft)["metadata"]["task"], "L1_001_matmul_small_fp32");
      // A cut-short trajectory is refused, and so is a failed one when only passes are wanted.
      std::vector<nlohmann::json> cut(o.trajectory.begin(), o.trajectory.end() - 1);
      EXPECT_FALSE(trajectory_to_sft(cut, SftOptions{}));
    }
  }
}

TEST_F(AgentLoop, MalformedArgumentsAndAKernelInText) {
  MockLlmServer server;
  const std::string good = read_text(kAdd / "baseline.py");
  server.push(call("verify", "{\"kernel_code\": \"import nki\\n def k(", "Trying."));  // cut off JSON
  server.push(call("no_such_tool", "{}"));
  server.push(say("My kernel:\n\n```python\n" + good + "```\n"));
  auto client = make_llm_client(mock_config(server, "anthropic"));
  ASSERT_TRUE(client);
  Outcome o = solve(kAdd, **client, SolveOptions{});
  EXPECT_EQ(o.result.status, "passed");
  EXPECT_EQ(o.result.turns, 3);
  EXPECT_EQ(o.result.kernel, good);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  const std::string second = reqs[1].body.dump();
  EXPECT_NE(second.find("not a JSON object"), std::string::npos) << second;
  EXPECT_NE(second.find("\"is_error\":true"), std::string::npos) << second;
  EXPECT_NE(reqs[2].body.dump().find("There is no tool 'no_such_tool'"), std::string::npos);
  bool implicit = false;
  for (const auto& ev : o.trajectory)
    if (ev.value("type", "") == "tool" && ev.value("implicit", false)) implicit = true;
  EXPECT_TRUE(implicit);
}

TEST_F(AgentLoop, TruncatedReplyIsToldToKeepShortAndTheRunGoesOn) {
  MockLlmServer server;
  const std::string good = read_text(kAdd / "baseline.py");
  MockReply cut = call("verify", args_with(good), "Here it comes");
  cut.truncate = true;
  server.push(cut);
  server.push(call("submit", args_with(good)));
  auto client = make_llm_client(mock_config(server, "openai"));
  ASSERT_TRUE(client);
  Outcome o = solve(kAdd, **client, SolveOptions{});
  EXPECT_EQ(o.result.status, "passed");
  EXPECT_EQ(o.result.turns, 2);
  ASSERT_EQ(server.request_count(), 2u);
  const std::string second = server.requests()[1].body.dump();
  // Either the partial call came through malformed (and was answered so), or the loop said the
  // reply was cut off: the model hears about it either way.
  EXPECT_TRUE(second.find("cut off") != std::string::npos || second.find("not a JSON object") != std::string::npos)
      << second;
}

TEST_F(AgentLoop, RefusalAndFailingEndpointEndTheRunKeepingTheTrajectory) {
  {
    MockLlmServer server;
    MockReply no;
    no.text = "I can't help with that.";
    no.stop_reason = "refusal";
    server.push(no);
    auto client = make_llm_client(mock_config(server, "openai"));
    ASSERT_TRUE(client);
    Outcome o = solve(kAdd, **client, SolveOptions{});
    EXPECT_EQ(o.result.status, "refused");
    EXPECT_EQ(o.result.outcome, kOutcomeRefused);
    EXPECT_FALSE(o.result.passed);
    EXPECT_EQ(o.trajectory.back()["type"], "end");
  }
  {
    MockLlmServer server;
    const std::string good = read_text(kAdd / "baseline.py");
    server.push(call("compile", args_with(good)));
    for (int i = 0; i < 4; ++i) {
      MockReply err;
      err.status = 500;
      err.text = "overloaded";
      server.push(err);
    }
    auto client = make_llm_client(mock_config(server, "anthropic"));  // max_retries 1: two requests per turn
    ASSERT_TRUE(client);
    Outcome o = solve(kAdd, **client, SolveOptions{});
    EXPECT_EQ(o.result.status, "interrupted");  // the endpoint's failure, not the task's result
    EXPECT_EQ(o.result.outcome, kOutcomeEndpointFailure);
    EXPECT_EQ(o.result.code, "nkia_llm_retries");
    EXPECT_EQ(o.result.to_json()["outcome"], "endpoint_failure");
    EXPECT_TRUE(o.result.compiled);
    EXPECT_EQ(o.result.kernel, good);  // the last kernel that compiled is kept
    EXPECT_NE(o.result.error.find("nkia_llm_retries"), std::string::npos) << o.result.error;
    EXPECT_EQ(server.request_count(), 3u);
    bool error_event = false;
    for (const auto& ev : o.trajectory)
      if (ev.value("type", "") == "model_call" && ev.contains("error")) error_event = true;
    EXPECT_TRUE(error_event);
    EXPECT_EQ(o.trajectory.back()["result"]["status"], "interrupted");
  }
}

// A run that ends without a pass says why: the last kernel's failed check or its compile
// Diagnostic's code, or that the turns ran out before any kernel was written.
TEST_F(AgentLoop, AFailedRunStoresItsCheckOrDiagnosticCode) {
  struct Case {
    std::string name;
    MockReply reply;
    const char* outcome;
    std::string status, check, code;
  };
  const std::string bad_tile = read_text(kSource / "tests" / "agent" / "matmul_256_rows.py");
  const std::string no_tail = read_text(kSource / "tests" / "agent" / "matmul_no_tail.py");
  const std::vector<Case> cases = {
      {"compile error", call("compile", args_with(bad_tile)), kOutcomeCompileError, "failed", "",
       "err_num_partition_exceed_arch_limit"},
      {"failed check", call("verify", args_with(no_tail)), kOutcomeFailedCheck, "compiled", "mismatch", ""},
      {"no kernel", say("Let me think about the tiling first."), kOutcomeBudgetExhausted, "failed", "", ""}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    MockLlmServer server;
    server.push(c.reply);
    auto client = make_llm_client(mock_config(server, "openai"));
    ASSERT_TRUE(client);
    SolveOptions so;
    so.max_turns = 1;
    Outcome o = solve(kL1_001, **client, so);
    EXPECT_EQ(o.result.status, c.status);
    EXPECT_EQ(o.result.outcome, c.outcome);
    EXPECT_EQ(o.result.check, c.check);
    if (!c.code.empty()) {
      EXPECT_EQ(o.result.code, c.code);
    } else if (c.outcome == kOutcomeFailedCheck) {
      EXPECT_FALSE(o.result.code.empty());  // the verification's Diagnostic
    }
    EXPECT_EQ(o.trajectory.back()["result"]["outcome"], c.outcome);
  }
}

// Faults of the endpoint are retried inside one model call: the episode does not notice them.
TEST_F(AgentLoop, EndpointFaultsAreRetriedAndTheEpisodeFinishes) {
  const std::string good = read_text(kAdd / "baseline.py");
  for (const std::string provider : {"openai", "anthropic"}) {
    for (bool stream : {true, false}) {
      SCOPED_TRACE(provider + (stream ? " streaming" : " whole replies"));
      MockLlmServer server;
      MockReply html;
      html.status = 502;
      html.raw_body = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
      html.raw_content_type = "text/html";
      server.push(html);
      MockReply not_json;
      not_json.raw_body = "upstream says hello";
      server.push(not_json);
      MockReply reset = call("submit", args_with(good), "Here it is.");
      reset.cut_after_bytes = 12;
      reset.reset = true;
      server.push(reset);
      server.push(call("submit", args_with(good), "Here it is."));
      LlmConfig cfg = mock_config(server, provider);
      cfg.stream = stream;
      cfg.max_retries = 3;
      auto client = make_llm_client(cfg);
      ASSERT_TRUE(client) << client.error().format();
      Outcome o = solve(kAdd, **client, SolveOptions{});
      EXPECT_EQ(o.result.status, "passed") << o.result.error;
      EXPECT_EQ(o.result.turns, 1);
      EXPECT_EQ(server.request_count(), 4u);
      ASSERT_GE(o.trajectory.size(), 2u);
      EXPECT_EQ(o.trajectory[1]["type"], "model_call");
      EXPECT_EQ(o.trajectory[1]["attempts"], 4);
    }
  }
}

TEST_F(AgentLoop, SingleShotIsOneCallWithoutTools) {
  MockLlmServer server;
  const std::string good = read_text(kAdd / "baseline.py");
  server.push(say("```python\n" + good + "```"));
  auto client = make_llm_client(mock_config(server, "openai"));
  ASSERT_TRUE(client);
  SolveOptions so;
  so.single_shot = true;
  Outcome o = solve(kAdd, **client, so);
  EXPECT_EQ(o.result.status, "passed");
  EXPECT_EQ(o.result.turns, 1);
  ASSERT_EQ(server.request_count(), 1u);
  auto body = server.requests()[0].body;
  EXPECT_FALSE(body.contains("tools") && !body["tools"].empty());

  MockLlmServer server2;
  server2.push(say("No code today."));
  auto client2 = make_llm_client(mock_config(server2, "openai"));
  Outcome o2 = solve(kAdd, **client2, so);
  EXPECT_EQ(o2.result.status, "failed");
  EXPECT_NE(o2.result.error.find("no python code"), std::string::npos);
}

TEST_F(AgentLoop, RouterEscalatesAfterFailedTurns) {
  MockLlmServer cheap, strong;
  const std::string good = read_text(kAdd / "baseline.py");
  const std::string zeros = read_text(kSource / "tests" / "tasks" / "hacks" / "zeros_add.py");
  cheap.push(call("verify", args_with(zeros)));
  cheap.push(call("verify", args_with(zeros)));
  strong.push(call("verify", args_with(good)));
  auto c1 = make_llm_client(mock_config(cheap, "openai", "cheap"));
  auto c2 = make_llm_client(mock_config(strong, "anthropic", "strong"));
  ASSERT_TRUE(c1 && c2);
  SolveOptions so;
  so.escalate_after = 2;
  Outcome o = solve(kAdd, **c1, so, c2->get());
  EXPECT_EQ(o.result.status, "passed");
  EXPECT_EQ(o.result.turns, 3);
  EXPECT_EQ(o.result.models, (std::vector<std::string>{"cheap", "strong"}));
  EXPECT_EQ(cheap.request_count(), 2u);
  EXPECT_EQ(strong.request_count(), 1u);
  // The stronger model sees the whole conversation so far.
  EXPECT_NE(strong.requests()[0].body.dump().find("zero_output"), std::string::npos);
}

TEST_F(AgentLoop, OptimisationTurnsKeepTheFastestPassingKernel) {
  MockLlmServer server;
  const std::string good = read_text(kAdd / "baseline.py");
  const std::string slow = read_text(kSource / "tests" / "tasks" / "slow" / "add_fp32_narrow_tiles.py");
  server.push(call("verify", args_with(slow)));
  server.push(call("profile", "{}"));
  server.push(call("verify", args_with(good)));
  server.push(call("submit", args_with(slow)));  // submits the slower one: the faster is kept
  auto client = make_llm_client(mock_config(server, "openai"));
  ASSERT_TRUE(client);
  SolveOptions so;
  so.optimize_turns = 5;
  Outcome o = solve(kAdd, **client, so);
  EXPECT_EQ(o.result.status, "passed");
  EXPECT_EQ(o.result.first_pass_turn, 1);
  EXPECT_EQ(o.result.turns, 4);
  EXPECT_EQ(o.result.tool_calls, 5);  // four calls and the loop's own profile
  EXPECT_EQ(o.result.kernel, good);
  EXPECT_DOUBLE_EQ(o.result.speedup, 1.0);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_NE(reqs[1].body.dump().find("more turns to make it faster"), std::string::npos);
  // The loop profiled the first passing kernel itself and showed it.
  EXPECT_NE(reqs[1].body.dump().find("Simulated profile of the passing kernel"), std::string::npos);
  EXPECT_NE(reqs[2].body.dump().find("latency"), std::string::npos);  // the profile's text
}

TEST_F(AgentLoop, HostileToolCallsAreAnsweredNotFatal) {
  auto task = load_task(kAdd.string());
  ASSERT_TRUE(task);
  AgentTools tools(*task, *service_, verify_options());
  auto run = [&](const std::string& name, const std::string& args) { return tools.call(ToolCall{"c", name, args}); };
  // Nesting deep enough to overflow a recursive dump: refused as not an object.
  ToolResult deep = run("compile", std::string(200000, '[') + std::string(200000, ']'));
  EXPECT_TRUE(deep.is_error);
  EXPECT_NE(deep.content.find("not a JSON object"), std::string::npos);
  ToolResult typed = run("verify", R"({"kernel_code": 42})");
  EXPECT_TRUE(typed.is_error);
  ToolResult nothing = run("submit", "{}");  // no kernel sent yet
  EXPECT_TRUE(nothing.is_error);
  ToolResult garbage = run("compile", nlohmann::json({{"kernel_code", std::string(1 << 20, '\x01')}}).dump());
  EXPECT_FALSE(garbage.compiled);
  EXPECT_NE(garbage.content.find("COMPILE FAILED"), std::string::npos);
  EXPECT_LE(garbage.content.size(), kDefaultToolResultChars);
  ToolResult reuse = run("verify", "{}");  // reuses the last kernel: the garbage
  EXPECT_TRUE(reuse.verified);
  EXPECT_FALSE(reuse.passed);
  ToolResult q = run("lookup", "{\"query\": \"\xff\xfe" + std::string(100000, 'a') + "\"}");  // invalid UTF-8
  EXPECT_TRUE(q.is_error);  // not JSON: refused before any lookup
  ToolResult q2 = run("lookup", nlohmann::json({{"query", std::string(100000, 'a')}}).dump());
  EXPECT_FALSE(q2.content.empty());
  EXPECT_LE(q2.content.size(), kDefaultToolResultChars);
  EXPECT_FALSE(q.content.empty());
  ToolResult hostile = run("compile", nlohmann::json({{"kernel_code", "import os\nos.system('true')\n"}}).dump());
  EXPECT_FALSE(hostile.compiled);
}

TEST(AgentTools, ExtractKernelTakesTheLastBlockDefiningTheEntry) {
  const std::string text =
      "first\n```python\ndef helper():\n  pass\n```\nthen\n```python\n@nki.jit\ndef kernel(x):\n  return x\n```\n"
      "and a note\n```\nplain text\n```\n";
  EXPECT_EQ(extract_kernel(text, "kernel"), "@nki.jit\ndef kernel(x):\n  return x\n");
  EXPECT_EQ(extract_kernel("no code", "kernel"), "");
  EXPECT_EQ(extract_kernel("```python\ndef kernel(a):\n  return a", "kernel"), "def kernel(a):\n  return a");
  std::string big(1 << 20, 'x');
  EXPECT_EQ(extract_kernel(big + "\n```python\ndef kernel():\n  pass\n```", "kernel"), "def kernel():\n  pass\n");
}

// ---- nki-agent bench ----

// `env_prefix`: words before the program, e.g. "env -u VAR".
testing::CliRun cli(const std::string& args, const std::string& env_prefix = "") {
  return testing::run_cli(args, testing::Stderr::kDrop, env_prefix);
}

TEST_F(AgentLoop, BenchRunsBaselinesIntoSqliteWithASummary) {
  const std::string db = (dir_ / "b.sqlite").string();
  auto r = cli("--json bench --tasks " + (kSource / "tests" / "tasks").string() + " --jobs 2 --workers 2 --db " + db +
               " --out " + dir_.string() + " --cache " + shared_cache());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["model"], "baseline");
  EXPECT_EQ(j["total"]["tasks"], 4);
  EXPECT_EQ(j["total"]["passed"], 4);
  EXPECT_EQ(j["total"]["pass_percent"], 100.0);
  EXPECT_EQ(j["total"]["fast_0"], 1.0);
  EXPECT_EQ(j["total"]["fast_1"], 0.0);  // a baseline is not faster than itself
  EXPECT_NEAR(j["total"]["geomean_speedup"].get<double>(), 1.0, 1e-9);
  auto store = ResultStore::open(db);
  ASSERT_TRUE(store);
  auto rows = (*store)->results(j["run_id"].get<std::string>());
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 4u);
  for (const auto& row : *rows) {
    EXPECT_EQ(row.status, "passed") << row.task_id << ": " << row.error;
    EXPECT_FALSE(row.kernel.empty());
  }
  auto again = cli("--json bench --tasks " + (kSource / "tests" / "tasks").string() + " --resume --db " + db +
                   " --out " + dir_.string() + " --cache " + shared_cache());
  ASSERT_EQ(again.exit_code, 0) << again.out;
  auto j2 = nlohmann::json::parse(again.out, nullptr, false);
  EXPECT_EQ(j2["run_id"], j["run_id"]);
  EXPECT_EQ(j2["skipped"], 4);
  EXPECT_EQ(j2["total"]["passed"], 4);
}

TEST_F(AgentLoop, SolveCliWritesTheKernelAndTheTrajectory) {
  MockLlmServer server;
  const std::string good = read_text(kAdd / "baseline.py");
  server.push(call("compile", args_with(good)));
  server.push(call("submit", "{}"));
  const fs::path config = dir_ / "models.toml";
  std::ofstream(config) << "[models.local]\nprovider = \"anthropic\"\nbase_url = \"" << server.base_url()
                        << "\"\nmodel = \"local-model\"\napi_key_env = \"NKIA_TEST_UNSET_KEY\"\n";
  const fs::path kernel = dir_ / "best.py";
  const fs::path traj = dir_ / "solve.jsonl";
  auto r = cli("--json solve --task " + kAdd.string() + " --model local --config " + config.string() + " -o " +
               kernel.string() + " --trajectory " + traj.string() + " --cache " + shared_cache());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["status"], "passed");
  EXPECT_EQ(j["turns"], 2);
  EXPECT_EQ(j["models"], nlohmann::json::array({"local"}));
  EXPECT_EQ(read_text(kernel), good);
  auto lines = read_jsonl(traj);
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines.front()["type"], "start");
  EXPECT_EQ(lines.back()["type"], "end");
  EXPECT_EQ(server.requests()[0].path, "/v1/messages");

  // The trajectory as SFT data; a torn file (a killed run) is skipped with a note.
  std::ofstream(dir_ / "torn.jsonl") << lines.front().dump() << "\n{\"type\": \"model_c";
  const fs::path sft = dir_ / "sft.out";
  auto x = cli("--json export-sft " + traj.string() + " " + (dir_ / "torn.jsonl").string() + " -o " + sft.string());
  ASSERT_EQ(x.exit_code, 0) << x.out;
  auto xj = nlohmann::json::parse(x.out, nullptr, false);
  EXPECT_EQ(xj["written"], 1) << x.out;
  EXPECT_EQ(xj["skipped"], 1) << x.out;
  auto records = read_jsonl(sft);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["metadata"]["model"], "local");
  EXPECT_EQ(records[0]["messages"].back()["role"], "assistant");

  // A model that cannot be configured is a clear error, not a crash.
  std::ofstream(config) << "[models.local]\napi_key = \"sk-secret\"\n";
  auto bad = cli("--json solve --task " + kAdd.string() + " --model local --config " + config.string());
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("nkia_llm_config"), std::string::npos) << bad.out;
  EXPECT_EQ(bad.out.find("sk-secret"), std::string::npos) << bad.out;
}

// SIGKILL loses the task in flight; SIGINT cancels it and stores nothing for it (exit 1). Either
// way --resume runs only the unfinished task.
TEST_F(AgentLoop, BenchResumesAfterAKill) {
  for (int sig : {SIGKILL, SIGINT}) {
    SCOPED_TRACE(sig == SIGKILL ? "SIGKILL" : "SIGINT");
    MockLlmServer server;
    // T_001 (add) is answered at once; every call after it (T_002, layernorm) is slow, so the
    // benchmark is killed while T_002 is in flight.
    server.push(say("```python\n" + read_text(kAdd / "baseline.py") + "```"));
    const std::string layernorm = read_text(kSource / "tests" / "tasks" / "layernorm_affine" / "baseline.py");
    for (int i = 0; i < 4; ++i) {
      MockReply slow = say("```python\n" + layernorm + "```");
      slow.delay_s = 3.0;
      server.push(slow);
    }
    const std::string db = (dir_ / fmt::format("k{}.sqlite", sig)).string();
    const fs::path config = dir_ / "empty.toml";
    std::ofstream(config) << "# no models\n";
    const std::string args = "bench --tasks " + (kSource / "tests" / "tasks").string() + " --only T_001 --only T_002 " +
                             "--model mock --provider openai --base-url " + server.base_url() + " --config " +
                             config.string() + " --single-shot --jobs 1 --workers 2 --db " + db + " --out " +
                             dir_.string() + " --cache " + shared_cache();
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string cmd = "exec " + std::string(NKIA_CLI) + " --json " + args + " --run killed >/dev/null 2>&1";
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait for the first task's row, then kill the benchmark while the second is in flight.
    bool first_done = false;
    for (int i = 0; i < 600 && !first_done; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!fs::exists(db)) continue;
      auto s = ResultStore::open(db);
      if (!s) continue;
      auto fin = (*s)->finished_tasks("killed");
      first_done = fin && !fin->empty();
    }
    ASSERT_TRUE(first_done) << "the first task never finished";
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (sig == SIGINT) {
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 1);  // interrupted: finished tasks kept, resumable
    }
    {
      auto s = ResultStore::open(db);
      ASSERT_TRUE(s);
      auto fin = (*s)->finished_tasks("killed");
      ASSERT_TRUE(fin);
      EXPECT_EQ(*fin, (std::set<std::string>{"T_001"}));
    }
    // Resume: the run is found by its settings and only the unfinished task runs.
    auto r = cli("--json " + args + " --resume");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["run_id"], "killed");
    EXPECT_EQ(j["skipped"], 1);
    EXPECT_EQ(j["total"]["tasks"], 2);
    EXPECT_EQ(j["total"]["passed"], 2) << r.out;
  }
}

// An endpoint that keeps failing: the task is stored "interrupted", counted apart from the results,
// and the benchmark exits 1; --resume against the endpoint, working again, runs it to a result.
TEST_F(AgentLoop, BenchStoresEndpointFailuresAsInterruptedAndResumeRunsThem) {
  MockLlmServer server;
  for (int i = 0; i < 2; ++i) {  // max_retries 1: two attempts, both a proxy's error page
    MockReply html;
    html.status = 502;
    html.raw_body = "<html><head><title>502 Bad Gateway</title></head></html>";
    html.raw_content_type = "text/html";
    server.push(html);
  }
  const fs::path config = dir_ / "fast.toml";
  std::ofstream(config) << "[llm]\nmax_retries = 1\nbackoff_initial_s = 0.01\nbackoff_max_s = 0.02\n";
  const std::string db = (dir_ / "i.sqlite").string();
  const std::string args = "--json bench --tasks " + (kSource / "tests" / "tasks").string() +
                           " --only T_001 --model mock --provider openai --base-url " + server.base_url() +
                           " --config " + config.string() + " --single-shot --jobs 1 --workers 2 --db " + db +
                           " --out " + dir_.string() + " --cache " + shared_cache();
  auto r = cli(args + " --run flaky");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // unfinished: rerun with --resume
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["total"]["tasks"], 0);        // no result ...
  EXPECT_EQ(j["total"]["interrupted"], 1);  // ... but one interrupted task, not a failure
  EXPECT_EQ(j["total"]["pass_percent"], 0.0);
  ASSERT_EQ(j["levels"].size(), 1u);
  EXPECT_EQ(j["levels"][0]["interrupted"], 1);
  ASSERT_EQ(j["interrupted"].size(), 1u);
  EXPECT_NE(j["interrupted"][0].get<std::string>().find("T_001: "), std::string::npos) << r.out;
  EXPECT_NE(j["interrupted"][0].get<std::string>().find("502 Bad Gateway"), std::string::npos) << r.out;
  EXPECT_TRUE(j["errors"].empty()) << r.out;
  EXPECT_EQ(server.request_count(), 2u);
  {
    auto store = ResultStore::open(db);
    ASSERT_TRUE(store);
    auto rows = (*store)->results("flaky");
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_EQ((*rows)[0].status, "interrupted");
    EXPECT_NE((*rows)[0].error.find("nkia_llm_retries"), std::string::npos) << (*rows)[0].error;
    auto fin = (*store)->finished_tasks("flaky");
    ASSERT_TRUE(fin);
    EXPECT_TRUE(fin->empty());
  }

  // The endpoint works again: --resume runs the interrupted task, which now gets its result.
  server.push(say("```python\n" + read_text(kAdd / "baseline.py") + "```"));
  auto again = cli(args + " --resume");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  auto j2 = nlohmann::json::parse(again.out, nullptr, false);
  ASSERT_FALSE(j2.is_discarded()) << again.out;
  EXPECT_EQ(j2["run_id"], "flaky");
  EXPECT_EQ(j2["skipped"], 0);
  EXPECT_EQ(j2["total"]["tasks"], 1);
  EXPECT_EQ(j2["total"]["passed"], 1);
  EXPECT_EQ(j2["total"]["interrupted"], 0);
  EXPECT_TRUE(j2["interrupted"].empty());
  EXPECT_EQ(server.request_count(), 3u);
  auto store = ResultStore::open(db);
  ASSERT_TRUE(store);
  auto rows = (*store)->results("flaky");
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 1u);  // the result replaced the interrupted row
  EXPECT_EQ((*rows)[0].status, "passed");
}

// Interrupted rows are in no share of the summary, even when they had passed before the endpoint
// failed (an optimisation turn cut short); nor are broken tasks.
TEST(BenchSummary, InterruptedRowsAreCountedApart) {
  auto row = [](const std::string& id, const std::string& status, bool passed, double speedup) {
    TaskRow r;
    r.task_id = id;
    r.level = 1;
    r.status = status;
    r.compiled = passed;
    r.passed = passed;
    r.speedup = speedup;
    r.input_tokens = 100;
    return r;
  };
  BenchSummary s =
      summarize_rows({row("a", "passed", true, 2.0), row("b", "failed", false, 0), row("c", "interrupted", true, 4.0),
                      row("d", "interrupted", false, 0), row("e", "error", false, 0)});
  EXPECT_EQ(s.total.tasks, 2);
  EXPECT_EQ(s.total.interrupted, 2);
  EXPECT_EQ(s.total.broken, 1);  // a broken task is no kernel failure: in no share either
  EXPECT_EQ(s.total.to_json()["broken"], 1);
  EXPECT_NE(s.format().find("1 broken task "), std::string::npos) << s.format();
  EXPECT_EQ(s.total.passed, 1);
  EXPECT_DOUBLE_EQ(s.total.fast_0, 0.5);
  EXPECT_DOUBLE_EQ(s.total.geomean_speedup, 2.0);
  EXPECT_EQ(s.total.input_tokens, 200);
  ASSERT_EQ(s.levels.size(), 1u);
  EXPECT_EQ(s.levels[0].interrupted, 2);
  EXPECT_EQ(s.total.to_json()["interrupted"], 2);
  EXPECT_EQ(s.total.to_json()["pass_percent"], 50.0);
  EXPECT_NE(s.format().find("2 tasks were interrupted"), std::string::npos) << s.format();
}

// A model with neither key nor base URL would reach a public API only to be turned away: solve and
// bench say which variable to set instead, at once, with the exit code of a user error.
TEST_F(AgentLoop, ModelWithoutKeyOrBaseUrlSaysWhichVariableToSet) {
  const std::string env =
      "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u NKIA_LLM_BASE_URL -u NKIA_LLM_PROVIDER -u NKIA_LLM_MODEL -u "
      "NKIA_CONFIG HOME=" +
      (dir_ / "home").string();
  struct Case {
    std::string command, var;
  };
  const std::vector<Case> cases = {
      {"--json solve --task " + kAdd.string() + " --model gpt-4o", "OPENAI_API_KEY"},
      {"--json bench --tasks " + (kSource / "tests" / "tasks").string() + " --model claude-sonnet-4-5 --db " +
           (dir_ / "k.sqlite").string() + " --out " + dir_.string(),
       "ANTHROPIC_API_KEY"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.command);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = cli(c.command, env);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["ok"], false);
    ASSERT_EQ(j["diagnostics"].size(), 1u) << r.out;
    const auto& d = j["diagnostics"][0];
    EXPECT_EQ(d["code"], "nkia_llm_config") << r.out;
    EXPECT_NE(d["message"].get<std::string>().find(c.var + " is not set"), std::string::npos) << r.out;
    EXPECT_NE(d["hint"].get<std::string>().find("--base-url"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "k.sqlite"));  // refused before the benchmark began
}

}  // namespace
}  // namespace nki_agent
