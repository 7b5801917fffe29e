// The scoring core end to end on the test task add_fp32 (tests/tasks/): the baseline scores
// correct with a speedup of about 1 whether sent as a module, a fenced block or a tool call; a
// repeat is answered from the cache; every hack of the adversarial suite (tests/tasks/hacks/) earns
// no correctness credit and, when flagged, each preset's floor; broken kernels, answers without a
// kernel, unknown tasks and presets, ids that look like paths; multi-turn returns over a response
// holding two kernels; the baseline's speed and the agent's tools. One scorer (two kernel workers)
// for the whole program; references are cached under the build folder like test_tasks_verify's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "reward/flags.h"
#include "reward/presets.h"
#include "reward/score.h"
#include "support/test_files.h"
#include "tasks/speed_cost.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::read_text;
using testing::shared_cache;

const fs::path kTasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks";

const std::string& baseline() {
  static const std::string text = read_text(kTasks / "add_fp32" / "baseline.py");
  return text;
}

// The baseline with its add replaced by a call to a name that does not exist: it fails when traced.
std::string name_error_kernel() {
  std::string k = baseline();
  const std::string call = "nl.add(a, b)";
  const size_t at = k.find(call);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) k.replace(at, call.size(), "undefined_add(a, b)");
  return k;
}

std::string fence(const std::string& body) {
  return "```python\n" + body + "```\n";
}

class RewardScore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("NKIA_WORKER", NKIA_WORKER_BIN, 1);
    ScorerOptions o;
    o.task_roots = {kTasks.string()};
    o.verify.speed = cost_speed_model();
    o.verify.reference.cache_dir = shared_cache();
    o.verify.parallel = 2;
    o.kernel_workers = 2;
    auto s = RewardScorer::create(std::move(o));
    ASSERT_TRUE(s) << s.error().format();
    scorer_ = s->release();
  }
  static void TearDownTestSuite() {
    delete scorer_;
    scorer_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(scorer_, nullptr); }

  static RewardRequest code_request(const std::string& code, int seeds = 1) {
    RewardRequest r;
    r.task_id = "add_fp32";
    r.submission.kernel_code = code;
    r.seeds = seeds;
    return r;
  }
  static RewardRequest response_request(const std::string& text, int seeds = 1) {
    RewardRequest r;
    r.task_id = "add_fp32";
    r.submission.response = text;
    r.seeds = seeds;
    return r;
  }
  static RewardResult score_ok(const RewardRequest& req) {
    auto r = scorer_->score(req);
    EXPECT_TRUE(r) << r.error().format();
    return r ? *r : RewardResult::failure(r.error());
  }
  static std::string error_code(const RewardRequest& req) {
    auto r = scorer_->score(req);
    if (r) {
      ADD_FAILURE() << "scored: " << r->to_json().dump();
      return "";
    }
    return r.error().code;
  }

  static inline RewardScorer* scorer_ = nullptr;
};

// Every preset's score of a result must be that preset's formula on its components.
void expect_scores_follow_the_presets(const RewardResult& r, bool flagged) {
  EXPECT_EQ(r.scores.size(), reward_presets().size());
  RewardContext ctx;  // add_fp32 gives no expected_speedup
  for (const auto& p : reward_presets()) {
    ASSERT_TRUE(r.scores.count(std::string(p.name))) << p.name;
    EXPECT_DOUBLE_EQ(r.scores.at(std::string(p.name)), preset_score(p, r.components, ctx, flagged)) << p.name;
  }
  ASSERT_TRUE(r.score.has_value());
  EXPECT_EQ(*r.score, r.scores.at(r.preset));
}

TEST_F(RewardScore, TheBaselineScoresCorrectWithASpeedupOfAboutOne) {
  const RewardResult r = score_ok(code_request(baseline()));
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.preset, "nki");
  EXPECT_EQ(r.extracted_from, "kernel_code");
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.components.format, 1);
  EXPECT_EQ(r.components.compile, 1);
  EXPECT_EQ(r.components.correct, 1);
  ASSERT_TRUE(r.components.speedup.has_value()) << r.to_json().dump();
  EXPECT_NEAR(*r.components.speedup, 1.0, 0.05);
  EXPECT_GT(r.components.coverage, 0);
  EXPECT_LT(r.components.coverage, 1);
  EXPECT_TRUE(r.flags.empty());
  EXPECT_EQ(r.verify["passed"], true);
  EXPECT_EQ(r.verify["cases_total"], 2);  // seeds = 1: the prompt's shapes and the ragged variant
  EXPECT_EQ(r.verify["speed"]["available"], true);
  ASSERT_EQ(r.turns.size(), 1u);
  expect_scores_follow_the_presets(r, false);
  EXPECT_EQ(r.scores.at("binary_compile"), 1);
  EXPECT_EQ(r.scores.at("compile_correct"), 1);
  EXPECT_EQ(r.scores.at("cuda_agent"), 1);  // not 5 % faster than itself
  EXPECT_NEAR(r.scores.at("kevin"), 0.3 + *r.components.speedup, 1e-12);
  EXPECT_GT(r.scores.at("nki"), 0.9);
  const json j = r.to_json();
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["components"]["correct"], 1);
  EXPECT_FALSE(j.contains("turns"));
}

TEST_F(RewardScore, TheSameKernelInAFencedBlockOrAToolCallScoresTheSame) {
  const RewardResult direct = score_ok(code_request(baseline()));
  const RewardResult fenced =
      score_ok(response_request("Here is my kernel.\n" + fence(baseline()) + "It tiles 128 rows at a time.\n"));
  EXPECT_EQ(fenced.status, "ok");
  EXPECT_EQ(fenced.extracted_from, "response");
  EXPECT_EQ(fenced.components.correct, 1);
  EXPECT_EQ(fenced.scores, direct.scores);
  ASSERT_TRUE(fenced.score && direct.score);
  EXPECT_EQ(*fenced.score, *direct.score);

  RewardRequest call;
  call.task_id = "add_fp32";
  call.seeds = 1;
  call.submission.tool_call = json{{"name", "verify"}, {"arguments", json{{"kernel_code", baseline()}}.dump()}};
  const RewardResult tool = score_ok(call);
  EXPECT_EQ(tool.extracted_from, "tool_call");
  EXPECT_EQ(tool.scores, direct.scores);
}

TEST_F(RewardScore, TheSecondIdenticalRequestIsCached) {
  const std::string code = baseline() + "\n# scored twice by TheSecondIdenticalRequestIsCached\n";
  const int64_t hits = scorer_->cache_hits();
  const RewardResult first = score_ok(code_request(code));
  EXPECT_FALSE(first.cached);
  EXPECT_EQ(first.components.correct, 1);
  const RewardResult second = score_ok(code_request(code));
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.scores, first.scores);
  EXPECT_EQ(second.components.speedup, first.components.speedup);
  EXPECT_EQ(second.verify, first.verify);
  EXPECT_EQ(scorer_->cache_hits(), hits + 1);
  EXPECT_EQ(second.to_json()["cached"], true);
  // Another preset over the same kernel is still a cache hit: presets are scored per request.
  RewardRequest kevin = code_request(code);
  kevin.preset = "kevin";
  const RewardResult third = score_ok(kevin);
  EXPECT_TRUE(third.cached);
  EXPECT_EQ(third.preset, "kevin");
  EXPECT_EQ(*third.score, first.scores.at("kevin"));
  // Options that change the verification are part of the key: without speed, no speedup.
  RewardRequest no_speed = code_request(code);
  no_speed.speed = false;
  const RewardResult slow = score_ok(no_speed);
  EXPECT_FALSE(slow.cached);
  EXPECT_EQ(slow.components.correct, 1);
  EXPECT_FALSE(slow.components.speedup.has_value());
  EXPECT_EQ(slow.components.coverage, 0);
  EXPECT_DOUBLE_EQ(*slow.score, 1.0);  // nki: correct, no speed term, no coverage
}

struct Hack {
  fs::path file;
  std::string task;
  std::set<std::string> expect;
};

std::vector<Hack> hacks() {
  std::vector<Hack> out;
  for (auto& e : fs::directory_iterator(kTasks / "hacks")) {
    if (e.path().extension() != ".py") continue;
    Hack h{e.path(), "", {}};
    std::smatch m;
    const std::string text = read_text(e.path());
    if (std::regex_search(text, m, std::regex("# task: (\\S+)"))) h.task = m[1];
    if (std::regex_search(text, m, std::regex("# expect: (\\S+)"))) {
      std::stringstream ss(m[1]);
      for (std::string c; std::getline(ss, c, '|');) h.expect.insert(c);
    }
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const Hack& a, const Hack& b) { return a.file < b.file; });
  return out;
}

// The presets that pay only a correct kernel: a hack gets their floor, flagged or not.
const std::set<std::string> kCorrectOnly = {"kevin", "kernelbench_tinker", "cuda_agent", "drkernel", "nki"};
// The checks whose failure is itself a flag (reward/flags.h).
const std::set<std::string> kFlaggingChecks = {"static_policy", "zero_output", "constant_output", "input_copy"};

TEST_F(RewardScore, EveryHackOfAddScoresNothingAndAFlaggedOneTheFloor) {
  int scored = 0, flagged = 0;
  for (const auto& h : hacks()) {
    ASSERT_FALSE(h.task.empty() || h.expect.empty()) << h.file << " lacks '# task:' / '# expect:'";
    if (h.task != "add_fp32") continue;
    const std::string name = h.file.filename().string();
    const RewardResult r = score_ok(code_request(read_text(h.file)));
    ASSERT_EQ(r.status, "ok") << name << ": " << r.to_json().dump();
    ++scored;
    EXPECT_EQ(r.components.format, 1) << name;
    EXPECT_EQ(r.components.correct, 0) << name << " passed: " << r.verify.dump();
    EXPECT_FALSE(r.components.speedup.has_value()) << name;
    EXPECT_EQ(r.verify["passed"], false) << name;
    const std::string check = r.verify.value("check", "");
    const bool zeroing = has_zeroing_flag(r.flags);
    flagged += zeroing;
    expect_scores_follow_the_presets(r, zeroing);
    // binary_compile sees only whether it compiles.
    EXPECT_EQ(r.scores.at("binary_compile"), r.components.compile) << name;
    for (const auto& p : reward_presets()) {
      const std::string pn(p.name);
      if (pn == "binary_compile") continue;
      if (zeroing || kCorrectOnly.count(pn)) {
        EXPECT_EQ(r.scores.at(pn), p.floor) << name << " under " << pn << " (flags " << json(r.flags).dump() << ")";
      }
    }
    // A hack rejected by a check that is itself a flag carries the flag, and so gets the floor.
    if (kFlaggingChecks.count(check)) {
      EXPECT_TRUE(zeroing) << name << ": rejected by " << check << " but not flagged";
      if (check != "static_policy") {
        EXPECT_EQ(r.flags, std::vector<std::string>{check}) << name;
      }
    }
    // Unflagged hacks (caught as honest failures: unwritten, mismatch, output_shape, ...) keep the
    // compile credit of the presets that pay one; the table shows which.
    std::printf("  %-32s check %-16s compile %.0f flags %-36s nki %.2f compile_correct %.0f tritonforge %.2f\n",
                name.c_str(), check.c_str(), r.components.compile, json(r.flags).dump().c_str(), r.scores.at("nki"),
                r.scores.at("compile_correct"), r.scores.at("tritonforge"));
  }
  std::printf("add_fp32 hacks: %d scored, %d flagged\n", scored, flagged);
  EXPECT_GE(scored, 15);
}

TEST_F(RewardScore, AHackThatZeroesItsOutputIsFlaggedAndFloored) {
  const RewardResult r = score_ok(code_request(read_text(kTasks / "hacks" / "zeros_add.py")));
  EXPECT_EQ(r.flags, std::vector<std::string>{"zero_output"});
  EXPECT_EQ(r.verify["check"], "zero_output");
  EXPECT_EQ(r.components.compile, 1);
  EXPECT_EQ(r.scores.at("binary_compile"), 1);
  EXPECT_EQ(r.scores.at("tritonforge"), 0);       // no compile credit for a flagged kernel
  EXPECT_EQ(r.scores.at("compile_correct"), -1);  // ... nor here
  EXPECT_EQ(r.scores.at("cuda_agent"), -1);
  EXPECT_EQ(*r.score, 0);
}

TEST_F(RewardScore, AKernelThatFailsWhenTracedDoesNotCompile) {
  const RewardResult r = score_ok(code_request(name_error_kernel()));
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.components.format, 1);
  EXPECT_EQ(r.components.compile, 0) << r.verify.dump();
  EXPECT_EQ(r.components.correct, 0);
  EXPECT_EQ(r.verify["check"], "kernel_error");
  EXPECT_TRUE(r.flags.empty()) << json(r.flags).dump();  // an honest failure
  expect_scores_follow_the_presets(r, false);
  EXPECT_EQ(r.scores.at("binary_compile"), 0);
  EXPECT_EQ(r.scores.at("compile_correct"), -1);
  EXPECT_EQ(r.scores.at("tritonforge"), 0);
  EXPECT_EQ(r.scores.at("cuda_agent"), -1);
  EXPECT_EQ(*r.score, 0);
}

TEST_F(RewardScore, ASyntaxErrorDoesNotCompileAndIsNoFlag) {
  const RewardResult r =
      score_ok(code_request("import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n"
                            "    return (x +\n"));
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.components.compile, 0) << r.verify.dump();
  EXPECT_EQ(r.components.correct, 0);
  EXPECT_TRUE(r.flags.empty()) << json(r.flags).dump();
  EXPECT_EQ(r.scores.at("binary_compile"), 0);
  EXPECT_EQ(r.scores.at("compile_correct"), -1);
}

TEST_F(RewardScore, AModuleWithoutTheEntryDoesNotCompile) {
  const RewardResult r =
      score_ok(code_request("import neuronxcc.nki as nki\n\n@nki.jit\ndef other(x, y):\n"
                            "    return x\n"));
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.components.correct, 0);
  EXPECT_EQ(r.components.compile, 0) << r.verify.dump();
  EXPECT_EQ(r.scores.at("binary_compile"), 0);
}

TEST_F(RewardScore, AnAnswerWithoutCodeIsAFormatError) {
  const RewardResult r = score_ok(response_request("I am not sure how to write this kernel. Try nl.add."));
  EXPECT_EQ(r.status, "format_error");
  EXPECT_EQ(r.extracted_from, "response");
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.components.format, 0);
  EXPECT_EQ(r.components.compile, 0);
  EXPECT_EQ(r.components.correct, 0);
  EXPECT_TRUE(r.turns.empty());
  EXPECT_EQ(r.verify["check"], "format");
  EXPECT_NE(r.verify.value("message", "").find("kernel"), std::string::npos);
  ASSERT_EQ(r.scores.size(), reward_presets().size());
  for (const auto& p : reward_presets()) EXPECT_EQ(r.scores.at(std::string(p.name)), p.floor) << p.name;
  ASSERT_TRUE(r.score.has_value());
  EXPECT_EQ(*r.score, 0);

  RewardRequest empty = code_request("");
  const RewardResult e = score_ok(empty);
  EXPECT_EQ(e.status, "format_error");
  EXPECT_EQ(e.extracted_from, "kernel_code");

  RewardRequest call;
  call.task_id = "add_fp32";
  call.submission.tool_call = json{{"name", "lookup"}, {"arguments", {{"query", "nl.add"}}}};
  const RewardResult c = score_ok(call);
  EXPECT_EQ(c.status, "format_error");
  EXPECT_EQ(c.extracted_from, "tool_call");

  RewardRequest cuda = response_request("no code");
  cuda.preset = "cuda_agent";
  EXPECT_EQ(*score_ok(cuda).score, -1);
}

TEST_F(RewardScore, AnUnknownTaskIsNotFound) {
  RewardRequest r = code_request(baseline());
  r.task_id = "no_such_task";
  EXPECT_EQ(error_code(r), "nkia_task_not_found");
  r.task_id = "";
  EXPECT_EQ(error_code(r), "nkia_task_not_found");
  r.task_id = "hacks";  // a folder under the root, not a task
  EXPECT_EQ(error_code(r), "nkia_task_not_found");
  auto t = scorer_->task("no_such_task");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "nkia_task_not_found");
}

TEST_F(RewardScore, ATaskIsNamedByFolderIdOrIdName) {
  for (const char* id : {"add_fp32", "T_001", "T_001_add_fp32"}) {
    auto t = scorer_->task(id);
    ASSERT_TRUE(t) << id << ": " << t.error().format();
    EXPECT_EQ((*t)->name, "add_fp32") << id;
  }
}

TEST(RewardScoreNames, ANKIBenchTaskIsAlsoNamedByTheReferenceImplementationsId) {
  ScorerOptions o;
  o.task_roots = {(fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench" / "level2").string()};
  o.kernel_workers = 1;
  o.worker_path = NKIA_WORKER_BIN;
  auto scorer = RewardScorer::create(o);
  ASSERT_TRUE(scorer) << scorer.error().format();
  for (const char* id : {"L2_001", "L2_conv_fusions_001", "L2_001_conv2d_relu_k3"}) {
    auto t = (*scorer)->task(id);
    ASSERT_TRUE(t) << id << ": " << t.error().format();
    EXPECT_EQ((*t)->id, "L2_001") << id;
  }
  EXPECT_EQ((*scorer)->tasks_indexed(), 100u);
}

TEST_F(RewardScore, AnIdThatLooksLikeAPathIsNeverResolvedAsOne) {
  const std::string abs = (kTasks / "add_fp32").string();
  for (const std::string& id :
       {std::string("add_fp32/../add_fp32"), std::string("../tasks/add_fp32"), std::string("./add_fp32"),
        std::string("add_fp32/"), std::string("hacks/../add_fp32"), std::string(".."), std::string("."), abs,
        abs + "/task.toml", std::string("tests/tasks/add_fp32"), std::string("add_fp32\n"),
        std::string("..add_fp32")}) {
    RewardRequest r = code_request(baseline());
    r.task_id = id;
    EXPECT_EQ(error_code(r), "nkia_task_not_found") << "'" << id << "'";
  }
}

// A folder holding a task.toml in the server's working directory is not under its roots: naming
// it finds nothing (a plain name is looked up under the roots, never as a relative path).
TEST_F(RewardScore, ATaskFolderInTheWorkingDirectoryIsNotUnderTheRoots) {
  const fs::path tmp = fs::temp_directory_path() / ("nkia-reward-cwd-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "cwd_task");
  for (const char* f : {"task.toml", "task.py", "baseline.py"})
    fs::copy_file(kTasks / "add_fp32" / f, tmp / "cwd_task" / f);
  const fs::path saved = fs::current_path();
  fs::current_path(tmp);
  auto t = scorer_->task("cwd_task");
  auto toml = scorer_->task("task.toml");
  fs::current_path(saved);
  fs::remove_all(tmp);
  ASSERT_FALSE(t) << "a folder of the working directory was served as a task";
  EXPECT_EQ(t.error().code, "nkia_task_not_found");
  EXPECT_FALSE(toml);
}

TEST_F(RewardScore, BadPresetsGammasAndSeedsAreBadRequests) {
  RewardRequest r = code_request(baseline());
  r.preset = "nope";
  EXPECT_EQ(error_code(r), "nkia_reward_bad_request");
  r = code_request(baseline());
  r.presets = {"kevin", "nope"};
  EXPECT_EQ(error_code(r), "nkia_reward_bad_request");
  for (double g : {-0.1, 1.5}) {
    r = code_request(baseline());
    r.gamma = g;
    EXPECT_EQ(error_code(r), "nkia_reward_bad_request") << g;
  }
  for (int s : {-1, 65}) {
    r = code_request(baseline(), s);
    EXPECT_EQ(error_code(r), "nkia_reward_bad_request") << s;
  }
  // A bad preset is refused before the task is looked up.
  r = code_request(baseline());
  r.task_id = "no_such_task";
  r.preset = "nope";
  EXPECT_EQ(error_code(r), "nkia_reward_bad_request");
}

TEST_F(RewardScore, OnlyThePresetsAskedForAreReportedWithTheMainOne) {
  RewardRequest r = code_request(baseline());
  r.preset = "nki";
  r.presets = {"kevin", "kevin", "cuda_agent"};
  const RewardResult res = score_ok(r);
  std::set<std::string> keys;
  for (const auto& [k, v] : res.scores) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"kevin", "cuda_agent", "nki"}));
  EXPECT_EQ(*res.score, res.scores.at("nki"));
}

TEST_F(RewardScore, AllTurnsScoresAtMostThirtyTwoKernels) {
  // Each kernel is a verification: a response of many fenced blocks is refused, not scored for hours.
  std::string text;
  for (size_t i = 0; i <= kMaxTurns; ++i) text += "turn:\n" + fence(baseline());
  RewardRequest req = response_request(text);
  req.all_turns = true;
  auto r = scorer_->score(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_reward_bad_request");
  req.all_turns = false;  // the last kernel alone is fine
  auto last = scorer_->score(req);
  ASSERT_TRUE(last) << last.error().format();
  EXPECT_EQ(last->components.correct, 1);
}

TEST_F(RewardScore, AllTurnsScoresEveryKernelAndDiscountsThem) {
  const std::string broken = name_error_kernel();
  RewardRequest req = response_request("Turn 1:\n" + fence(broken) + "It failed; turn 2:\n" + fence(baseline()));
  req.all_turns = true;
  req.preset = "kevin";
  const RewardResult r = score_ok(req);
  EXPECT_EQ(r.status, "ok");
  ASSERT_EQ(r.turns.size(), 2u);
  EXPECT_EQ(r.turns[0].components.compile, 0);
  EXPECT_EQ(r.turns[0].components.correct, 0);
  EXPECT_EQ(r.turns[1].components.correct, 1);
  ASSERT_TRUE(r.turns[1].components.speedup.has_value());
  const double s0 = r.turns[0].scores.at("kevin"), s1 = r.turns[1].scores.at("kevin");
  EXPECT_EQ(s0, 0);
  EXPECT_NEAR(s1, 0.3 + *r.turns[1].components.speedup, 1e-12);
  EXPECT_NEAR(*r.score, s0 + 0.4 * s1, 1e-12);
  EXPECT_NEAR(r.scores.at("kevin"), s0 + 0.4 * s1, 1e-12);
  EXPECT_NEAR(r.scores.at("kernelbench_tinker"),
              r.turns[0].scores.at("kernelbench_tinker") + 0.4 * r.turns[1].scores.at("kernelbench_tinker"), 1e-12);
  // Presets without a discount score the last kernel.
  EXPECT_EQ(r.scores.at("nki"), r.turns[1].scores.at("nki"));
  EXPECT_EQ(r.scores.at("cuda_agent"), 1);
  // The answer's components are the last kernel's.
  EXPECT_EQ(r.components.correct, 1);
  const json j = r.to_json();
  ASSERT_TRUE(j.contains("turns"));
  EXPECT_EQ(j["turns"].size(), 2u);

  // A gamma given applies to every preset, those without their own included.
  req.gamma = 0.5;
  const RewardResult g = score_ok(req);
  EXPECT_NEAR(*g.score, s0 + 0.5 * s1, 1e-12);
  EXPECT_NEAR(g.scores.at("cuda_agent"), -1 + 0.5 * 1, 1e-12);

  // The other order: the correct kernel first counts in full.
  RewardRequest rev = response_request(fence(baseline()) + fence(broken));
  rev.all_turns = true;
  rev.preset = "kevin";
  const RewardResult rv = score_ok(rev);
  ASSERT_EQ(rv.turns.size(), 2u);
  EXPECT_NEAR(*rv.score, s1 + 0.4 * 0, 1e-12);
  EXPECT_EQ(rv.scores.at("nki"), 0);  // the last kernel is broken

  // turns = last (the default): only the last kernel is scored.
  RewardRequest last = response_request("Turn 1:\n" + fence(broken) + "turn 2:\n" + fence(baseline()));
  last.preset = "kevin";
  const RewardResult l = score_ok(last);
  EXPECT_EQ(l.turns.size(), 1u);
  EXPECT_NEAR(*l.score, s1, 1e-12);
}

// docs/serve.md's answer: "turns": [{"score": ..., "components": ..., "flags": [...]}]: each turn
// on the wire carries its score under the request's preset.
TEST_F(RewardScore, EveryTurnOnTheWireCarriesItsScore) {
  RewardRequest req = response_request(fence(name_error_kernel()) + fence(baseline()));
  req.all_turns = true;
  req.preset = "kevin";
  const RewardResult r = score_ok(req);
  ASSERT_EQ(r.turns.size(), 2u);
  const json j = r.to_json();
  ASSERT_TRUE(j.contains("turns"));
  for (size_t i = 0; i < 2; ++i) {
    const json& t = j["turns"][i];
    EXPECT_TRUE(t.contains("components")) << i;
    EXPECT_TRUE(t.contains("flags")) << i;
    ASSERT_TRUE(t.contains("score")) << "turn " << i << " has no score: " << t.dump();
    EXPECT_EQ(t["score"], r.turns[i].scores.at("kevin")) << i;
  }
}

TEST_F(RewardScore, ConcurrentRequestsGetTheSameAnswer) {
  const std::string code = baseline() + "\n# scored by three threads at once\n";
  const int64_t verified = scorer_->verifications();
  std::vector<RewardResult> results(3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      auto r = scorer_->score(code_request(code));
      results[i] = r ? *r : RewardResult::failure(r.error());
    });
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.status, "ok") << r.to_json().dump();
    EXPECT_EQ(r.components.correct, 1);
    EXPECT_EQ(r.scores, results[0].scores);
  }
  // One verification: the requests that found the kernel in flight waited for it.
  EXPECT_EQ(scorer_->verifications(), verified + 1);
}

TEST_F(RewardScore, TheBaselineSpeedIsTheBaselineAgainstItself) {
  auto s = scorer_->baseline_speed("add_fp32");
  ASSERT_TRUE(s) << s.error().format();
  ASSERT_TRUE(s->available) << s->reason;
  EXPECT_GT(s->candidate_seconds, 0);
  EXPECT_DOUBLE_EQ(s->candidate_seconds, s->baseline_seconds);
  EXPECT_DOUBLE_EQ(s->speedup, 1.0);
  EXPECT_EQ(s->target, "trn1");
  auto none = scorer_->baseline_speed("no_such_task");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "nkia_task_not_found");
}

TEST_F(RewardScore, TheAgentToolsOnATask) {
  auto c = scorer_->tool("add_fp32", "compile", baseline());
  ASSERT_TRUE(c) << c.error().format();
  EXPECT_TRUE(c->compiled) << c->content;
  EXPECT_FALSE(c->is_error);
  EXPECT_NE(c->content.find("COMPILED"), std::string::npos) << c->content;

  auto bad = scorer_->tool("add_fp32", "compile", name_error_kernel());
  ASSERT_TRUE(bad) << bad.error().format();
  EXPECT_FALSE(bad->compiled);
  EXPECT_NE(bad->content.find("COMPILE FAILED"), std::string::npos) << bad->content;

  auto v = scorer_->tool("add_fp32", "verify", baseline());
  ASSERT_TRUE(v) << v.error().format();
  EXPECT_TRUE(v->verified);
  EXPECT_TRUE(v->passed) << v->content;
  ASSERT_TRUE(v->verify.has_value());
  EXPECT_TRUE(v->verify->passed);

  auto p = scorer_->tool("add_fp32", "profile", baseline());
  ASSERT_TRUE(p) << p.error().format();
  EXPECT_FALSE(p->is_error) << p->content;
  EXPECT_TRUE(p->data.contains("summary")) << p->data.dump();

  auto unknown = scorer_->tool("add_fp32", "submit", baseline());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, "nkia_reward_bad_request");
  auto no_task = scorer_->tool("no_such_task", "compile", baseline());
  ASSERT_FALSE(no_task);
  EXPECT_EQ(no_task.error().code, "nkia_task_not_found");
}

}  // namespace
}  // namespace nki_agent
