// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The pure parts of the reward core, no kernel run: every preset's formula on hand-made components
// (docs/rl.md, RL-CONVENTIONS.md §4.8), floors and flags, multi-turn returns; the flags read off
// hand-made verifications; the kernels found in a model's answer (fenced blocks, tool-call tags,
// multi-turn order, the prompt cut); the result cache's LRU order and counters; the JSON of a result.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "reward/extract.h"
#include "reward/flags.h"
#include "reward/presets.h"
#include "reward/result_cache.h"
#include "reward/score_types.h"
#include "tasks/verify.h"

namespace nki_agent {
namespace {

using nlohmann::json;

const RewardPreset& preset(std::string_view name) {
  const RewardPreset* p = find_preset(name);
  if (p == nullptr) {
    ADD_FAILURE() << "no preset " << name;
    return reward_presets().front();
  }
  return *p;
}

// A kernel that was found (format 1) with the given measured parts.
RewardComponents comp(double compile, double correct, std::optional<double> speedup = std::nullopt,
                      double coverage = 0) {
  RewardComponents c;
  c.format = 1;
  c.compile = compile;
  c.correct = correct;
  c.speedup = speedup;
  c.coverage = coverage;
  return c;
}

double score(std::string_view name, const RewardComponents& c, const RewardContext& ctx = {}, bool flagged = false) {
  return preset_score(preset(name), c, ctx, flagged);
}

RewardContext optimized(double bar) {
  RewardContext ctx;
  ctx.optimized_speedup = bar;
  return ctx;
}

const RewardComponents kNotCompiled = comp(0, 0);
const RewardComponents kCompiledWrong = comp(1, 0);
const RewardComponents kNoFormat = RewardComponents{};

// ---------------------------------------------------------------------------------------------
// The table.

TEST(RewardPresets, TheTableHoldsTheEightPresetsWithUniqueNames) {
  std::set<std::string> names;
  for (const auto& p : reward_presets()) {
    EXPECT_TRUE(names.insert(std::string(p.name)).second) << "duplicate preset " << p.name;
    EXPECT_FALSE(p.formula.empty()) << p.name;
    EXPECT_NE(p.score, nullptr) << p.name;
    EXPECT_EQ(find_preset(p.name), &p) << p.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"binary_compile", "compile_correct", "kevin", "kernelbench_tinker",
                                          "cuda_agent", "drkernel", "tritonforge", "nki"}));
  ASSERT_NE(find_preset(kDefaultPreset), nullptr);
  EXPECT_EQ(find_preset(kDefaultPreset)->name, "nki");
}

TEST(RewardPresets, UnknownNamesFindNothing) {
  EXPECT_EQ(find_preset("nope"), nullptr);
  EXPECT_EQ(find_preset(""), nullptr);
  EXPECT_EQ(find_preset("NKI"), nullptr);                            // names are exact
  EXPECT_EQ(find_preset("nki "), nullptr);                           // no trimming
  EXPECT_EQ(find_preset(std::string_view("kevin\0x", 7)), nullptr);  // no prefix match
  EXPECT_EQ(find_preset("kevi"), nullptr);
}

TEST(RewardPresets, FloorsGammasAndFlagSightAreTheDocumentedOnes) {
  EXPECT_EQ(preset("binary_compile").floor, 0);
  EXPECT_FALSE(preset("binary_compile").sees_flags);
  EXPECT_EQ(preset("compile_correct").floor, -1);
  EXPECT_EQ(preset("cuda_agent").floor, -1);
  for (const char* name : {"kevin", "kernelbench_tinker", "drkernel", "tritonforge", "nki"})
    EXPECT_EQ(preset(name).floor, 0) << name;
  for (const auto& p : reward_presets()) EXPECT_EQ(p.sees_flags, p.name != "binary_compile") << p.name;
  ASSERT_TRUE(preset("kevin").gamma.has_value());
  EXPECT_DOUBLE_EQ(*preset("kevin").gamma, 0.4);
  ASSERT_TRUE(preset("kernelbench_tinker").gamma.has_value());
  EXPECT_DOUBLE_EQ(*preset("kernelbench_tinker").gamma, 0.4);
  for (const char* name : {"binary_compile", "compile_correct", "cuda_agent", "drkernel", "tritonforge", "nki"})
    EXPECT_FALSE(preset(name).gamma.has_value()) << name;
}

// ---------------------------------------------------------------------------------------------
// Each formula.

TEST(RewardPresets, BinaryCompileIsTheCompileComponentAndIgnoresFlags) {
  EXPECT_EQ(score("binary_compile", kNotCompiled), 0);
  EXPECT_EQ(score("binary_compile", kCompiledWrong), 1);
  EXPECT_EQ(score("binary_compile", comp(1, 1, 3.0, 0.5)), 1);
  EXPECT_EQ(score("binary_compile", kCompiledWrong, {}, /*flagged=*/true), 1);
  EXPECT_EQ(score("binary_compile", kNotCompiled, {}, /*flagged=*/true), 0);
  EXPECT_EQ(score("binary_compile", kNoFormat), 0);
}

TEST(RewardPresets, CompileCorrectIsMinusOneZeroOne) {
  EXPECT_EQ(score("compile_correct", kNotCompiled), -1);
  EXPECT_EQ(score("compile_correct", kCompiledWrong), 0);
  EXPECT_EQ(score("compile_correct", comp(1, 1, 0.5)), 1);
  EXPECT_EQ(score("compile_correct", comp(1, 1, 40.0)), 1);
  EXPECT_EQ(score("compile_correct", comp(1, 1, 2.0), {}, true), -1);
  EXPECT_EQ(score("compile_correct", kNoFormat), -1);
}

TEST(RewardPresets, KevinIsCorrectTimesPointThreePlusUncappedSpeedup) {
  EXPECT_EQ(score("kevin", kNotCompiled), 0);
  EXPECT_EQ(score("kevin", kCompiledWrong), 0);
  EXPECT_DOUBLE_EQ(score("kevin", comp(1, 1, 2.0)), 2.3);
  EXPECT_DOUBLE_EQ(score("kevin", comp(1, 1, 0.5)), 0.8);
  EXPECT_DOUBLE_EQ(score("kevin", comp(1, 1, 50.0)), 50.3);  // no cap
  EXPECT_DOUBLE_EQ(score("kevin", comp(1, 1)), 0.3);         // correct, speed not measured
  EXPECT_EQ(score("kevin", comp(1, 1, 2.0), {}, true), 0);
  EXPECT_EQ(score("kevin", kNoFormat), 0);
}

TEST(RewardPresets, KernelbenchTinkerCapsTheSpeedupAtTen) {
  EXPECT_EQ(score("kernelbench_tinker", kCompiledWrong), 0);
  EXPECT_DOUBLE_EQ(score("kernelbench_tinker", comp(1, 1, 4.0)), 4.3);
  EXPECT_DOUBLE_EQ(score("kernelbench_tinker", comp(1, 1, 9.5)), 9.8);
  EXPECT_DOUBLE_EQ(score("kernelbench_tinker", comp(1, 1, 10.0)), 10.3);
  EXPECT_DOUBLE_EQ(score("kernelbench_tinker", comp(1, 1, 50.0)), 10.3);
  EXPECT_DOUBLE_EQ(score("kernelbench_tinker", comp(1, 1)), 0.3);
  EXPECT_EQ(score("kernelbench_tinker", comp(1, 1, 4.0), {}, true), 0);
}

TEST(RewardPresets, CudaAgentMilestonesAtFivePercent) {
  EXPECT_EQ(score("cuda_agent", kNotCompiled), -1);
  EXPECT_EQ(score("cuda_agent", kCompiledWrong), -1);
  EXPECT_EQ(score("cuda_agent", comp(1, 1)), 1);  // correct, no speed
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 0.5)), 1);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.0)), 1);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.05)), 1);  // 1 - 1/1.05 = 4.8 %: not more than 5 %
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.06)), 2);
  // b(t, t0) = 1[(t0 - t) / t0 > 5 %]: exactly 5 % faster (speedup 1/0.95) is not a milestone.
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.0 / 0.95)), 1);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.0 / 0.95 + 1e-9)), 2);
  // Without an optimised bar the top milestone is out of reach, however fast.
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 100.0)), 2);
  // With the task's optimised speedup 2: more than 5 % over both bars is 3.
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 2.2), optimized(2.0)), 3);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 2.1), optimized(2.0)), 2);         // 5 % over the bar, not more
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 2.0 / 0.95), optimized(2.0)), 2);  // the exact boundary
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 2.0 / 0.95 + 1e-6), optimized(2.0)), 3);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.5), optimized(2.0)), 2);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.0), optimized(2.0)), 1);
  // A bar below 1 is passed by any kernel that beats eager; beating the bar alone is not enough.
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.2), optimized(0.8)), 3);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 1.0), optimized(0.8)), 1);
  EXPECT_EQ(score("cuda_agent", comp(1, 1, 2.2), optimized(2.0), true), -1);
  EXPECT_EQ(score("cuda_agent", kNoFormat), -1);
}

TEST(RewardPresets, DrKernelCapsTheSpeedupAtThreeAndAddsCoverage) {
  EXPECT_EQ(score("drkernel", kCompiledWrong), 0);
  EXPECT_EQ(score("drkernel", comp(1, 0, std::nullopt, 0.9)), 0);
  EXPECT_DOUBLE_EQ(score("drkernel", comp(1, 1, 2.0, 0.4)), 0.5 + 1.0 + 0.2);
  EXPECT_DOUBLE_EQ(score("drkernel", comp(1, 1, 3.0, 0.0)), 2.0);
  EXPECT_DOUBLE_EQ(score("drkernel", comp(1, 1, 5.0, 0.0)), 2.0);
  EXPECT_DOUBLE_EQ(score("drkernel", comp(1, 1, 5.0, 1.0)), 2.5);
  EXPECT_DOUBLE_EQ(score("drkernel", comp(1, 1, 0.5, 0.1)), 0.5 + 0.25 + 0.05);
  EXPECT_DOUBLE_EQ(score("drkernel", comp(1, 1)), 0.5);
  EXPECT_EQ(score("drkernel", comp(1, 1, 2.0, 0.4), {}, true), 0);
}

TEST(RewardPresets, TritonForgeIsCompileCreditPlusClampedSpeedupOverOne) {
  EXPECT_EQ(score("tritonforge", kNotCompiled), 0);
  EXPECT_DOUBLE_EQ(score("tritonforge", kCompiledWrong), 0.1);
  EXPECT_DOUBLE_EQ(score("tritonforge", comp(1, 1, 0.5)), 0.4);  // slower: no speed term, not negative
  EXPECT_DOUBLE_EQ(score("tritonforge", comp(1, 1, 1.0)), 0.4);
  EXPECT_DOUBLE_EQ(score("tritonforge", comp(1, 1, 3.0)), 0.1 + 0.3 + 2.0);
  EXPECT_DOUBLE_EQ(score("tritonforge", comp(1, 1, 11.0)), 0.1 + 0.3 + 10.0);
  EXPECT_DOUBLE_EQ(score("tritonforge", comp(1, 1, 25.0)), 0.1 + 0.3 + 10.0);  // capped at 10
  EXPECT_DOUBLE_EQ(score("tritonforge", comp(1, 1)), 0.4);
  EXPECT_EQ(score("tritonforge", comp(1, 1, 3.0), {}, true), 0);
  EXPECT_EQ(score("tritonforge", kCompiledWrong, {}, true), 0);  // a flag also takes the compile credit
}

// Correctness gates everything (no compile credit), then speed on a log scale and coverage.
TEST(RewardPresets, NkiIsCorrectnessThenLogSpeedClampedAndCoverage) {
  EXPECT_EQ(score("nki", kNotCompiled), 0);
  EXPECT_EQ(score("nki", kCompiledWrong), 0);
  EXPECT_EQ(score("nki", comp(1, 0, 8.0, 1.0)), 0);
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 1.0, 0.0)), 1.0);
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 2.0, 0.5)), 1.0 + 0.5 + 0.25);
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 4.0, 0.0)), 2.0);
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 16.0, 0.0)), 2.0);  // log2 clamped at 2
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 0.5, 0.0)), 0.5);
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 0.01, 0.0)), 0.5);  // log2 clamped at -1
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, std::sqrt(2.0), 0.0)), 1.25);
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, std::nullopt, 0.2)), 1.1);  // no speed: log term 0
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 0.0, 0.0)), 1.0);           // a zero speedup: no log of it
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 1.0, 1.5)), 1.5);           // coverage clamped to 1
  EXPECT_DOUBLE_EQ(score("nki", comp(1, 1, 1.0, -0.5)), 1.0);          // ... and to 0
  EXPECT_EQ(score("nki", comp(1, 1, 4.0, 1.0), {}, true), 0);
  EXPECT_EQ(score("nki", kCompiledWrong, {}, true), 0);
  EXPECT_EQ(score("nki", kNoFormat), 0);
}

// A flag puts every preset but binary_compile at its floor, whatever the kernel earned; so does
// an answer with no kernel (binary_compile included: nothing compiled).
TEST(RewardPresets, FlaggedAndFormatlessKernelsGetTheFloor) {
  const RewardComponents best = comp(1, 1, 5.0, 0.9);
  RewardComponents no_format = best;
  no_format.format = 0;
  for (const auto& p : reward_presets()) {
    const double flagged = preset_score(p, best, optimized(1.5), true);
    EXPECT_EQ(flagged, p.sees_flags ? p.floor : best.compile) << p.name;
    EXPECT_EQ(preset_score(p, no_format, optimized(1.5), false), p.floor) << p.name;
    EXPECT_EQ(preset_score(p, kNoFormat, {}, false), p.floor) << p.name;
    // Nothing scores below the floor.
    for (const auto& c : {kNotCompiled, kCompiledWrong, comp(1, 1, 0.01), comp(1, 1, 100.0, 1.0)})
      EXPECT_GE(preset_score(p, c, optimized(2.0), false), p.floor) << p.name;
    // A correct kernel never scores below an incorrect one, nor an incorrect compiling one below a
    // kernel that does not compile.
    EXPECT_GE(preset_score(p, comp(1, 1, 0.01), {}, false), preset_score(p, kCompiledWrong, {}, false)) << p.name;
    EXPECT_GE(preset_score(p, kCompiledWrong, {}, false), preset_score(p, kNotCompiled, {}, false)) << p.name;
  }
}

// ---------------------------------------------------------------------------------------------
// Multi-turn returns.

TEST(RewardPresets, TrajectoryScoreIsTheDiscountedSumOrTheLastTurn) {
  const std::vector<double> turns = {1.0, 2.0, 3.0};
  // kevin's own gamma 0.4: 1 + 0.4 * 2 + 0.16 * 3.
  EXPECT_NEAR(trajectory_score(preset("kevin"), turns), 1.0 + 0.8 + 0.48, 1e-12);
  EXPECT_NEAR(trajectory_score(preset("kernelbench_tinker"), turns), 2.28, 1e-12);
  // A gamma given wins over the preset's.
  EXPECT_NEAR(trajectory_score(preset("kevin"), turns, 0.5), 1.0 + 1.0 + 0.75, 1e-12);
  EXPECT_NEAR(trajectory_score(preset("kevin"), turns, 1.0), 6.0, 1e-12);
  EXPECT_NEAR(trajectory_score(preset("kevin"), turns, 0.0), 1.0, 1e-12);  // gamma 0: the first turn only
  // Presets without a gamma score the last turn, unless one is given.
  for (const char* name : {"binary_compile", "compile_correct", "cuda_agent", "drkernel", "tritonforge", "nki"}) {
    EXPECT_EQ(trajectory_score(preset(name), turns), 3.0) << name;
    EXPECT_NEAR(trajectory_score(preset(name), turns, 0.5), 2.75, 1e-12) << name;
  }
  // One turn is that turn's score.
  EXPECT_EQ(trajectory_score(preset("kevin"), {2.5}), 2.5);
  EXPECT_EQ(trajectory_score(preset("nki"), {2.5}), 2.5);
  // No turn: the floor.
  EXPECT_EQ(trajectory_score(preset("cuda_agent"), {}), -1);
  EXPECT_EQ(trajectory_score(preset("kevin"), {}), 0);
  // Negative turn scores are discounted like any other.
  EXPECT_NEAR(trajectory_score(preset("cuda_agent"), {-1, 2}, 0.4), -1 + 0.8, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Flags.

PolicyViolation violation(std::string rule) {
  PolicyViolation v;
  v.rule = std::move(rule);
  v.message = "a violation";
  return v;
}

VerifyResult failed(std::string check) {
  VerifyResult v;
  v.passed = false;
  v.check = std::move(check);
  v.message = "failed";
  return v;
}

VerifyResult kernel_error(std::string code) {
  VerifyResult v = failed("kernel_error");
  v.diagnostic = Diagnostic::error(std::move(code), "the kernel failed");
  return v;
}

VerifyResult passed_with_speedup(double speedup, bool available = true) {
  VerifyResult v;
  v.passed = true;
  v.speed.available = available;
  v.speed.speedup = speedup;
  return v;
}

using Flags = std::vector<std::string>;

TEST(RewardFlags, TheTableNamesEachFlagOnceAndOnlyExcessiveSpeedupIsHarmless) {
  std::set<std::string> names;
  for (const auto& f : reward_flags()) {
    EXPECT_TRUE(names.insert(std::string(f.name)).second) << f.name;
    EXPECT_FALSE(f.meaning.empty()) << f.name;
    EXPECT_EQ(f.zeroes, f.name != "excessive_speedup") << f.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"static_policy", "trace_time_value_read", "sandbox_refused", "zero_output",
                                          "constant_output", "input_copy", "excessive_speedup"}));
  EXPECT_DOUBLE_EQ(kExcessiveSpeedup, 10.0);
}

TEST(RewardFlags, APassingKernelHasNone) {
  EXPECT_EQ(flags_of(passed_with_speedup(1.0)), Flags{});
  EXPECT_EQ(flags_of(VerifyResult{}), Flags{});
}

TEST(RewardFlags, PolicyViolationsAreFlagsButASyntaxErrorIsNot) {
  VerifyResult v = failed("static_policy");
  v.violations = {violation("syntax")};
  EXPECT_EQ(flags_of(v), Flags{});
  EXPECT_FALSE(has_zeroing_flag(flags_of(v)));

  v.violations = {violation("system_access")};
  EXPECT_EQ(flags_of(v), Flags{"static_policy:system_access"});
  EXPECT_TRUE(has_zeroing_flag(flags_of(v)));

  // Each rule once, in the order found; a syntax violation among them stays out.
  v.violations = {violation("host_math"), violation("syntax"), violation("precision_drop"), violation("host_math")};
  EXPECT_EQ(flags_of(v), (Flags{"static_policy:host_math", "static_policy:precision_drop"}));

  for (const char* rule :
       {"reference_framework", "reference_access", "system_access", "introspection", "host_math", "precision_drop"}) {
    VerifyResult one = failed("static_policy");
    one.violations = {violation(rule)};
    EXPECT_EQ(flags_of(one), Flags{std::string("static_policy:") + rule}) << rule;
  }
}

TEST(RewardFlags, SandboxRefusalsAndTraceTimeReadsOfAKernelError) {
  EXPECT_EQ(flags_of(kernel_error("nkia_trace_time_value_read")), Flags{"trace_time_value_read"});
  EXPECT_EQ(flags_of(kernel_error("nkia_sandbox_refused")), Flags{"sandbox_refused"});
  EXPECT_EQ(flags_of(kernel_error("nkia_sandbox_forbidden_syscall")), Flags{"sandbox_refused"});
  // An honest kernel error is no flag.
  EXPECT_EQ(flags_of(kernel_error("nkia_py_name_error")), Flags{});
  EXPECT_EQ(flags_of(kernel_error("err_out_of_bounds")), Flags{});
  EXPECT_EQ(flags_of(failed("kernel_error")), Flags{});  // no diagnostic
  // The code counts only when the kernel failed with it.
  VerifyResult other = failed("mismatch");
  other.diagnostic = Diagnostic::error("nkia_sandbox_refused", "x");
  EXPECT_EQ(flags_of(other), Flags{});
  EXPECT_TRUE(has_zeroing_flag(flags_of(kernel_error("nkia_trace_time_value_read"))));
  EXPECT_TRUE(has_zeroing_flag(flags_of(kernel_error("nkia_sandbox_refused"))));
}

TEST(RewardFlags, DegenerateOutputsAreFlagsAndOtherFailuresAreNot) {
  for (const char* check : {"zero_output", "constant_output", "input_copy"}) {
    EXPECT_EQ(flags_of(failed(check)), Flags{check}) << check;
    EXPECT_TRUE(has_zeroing_flag(flags_of(failed(check)))) << check;
  }
  for (const char* check : {"mismatch", "unwritten", "output_shape", "output_dtype", "output_count", "nan"})
    EXPECT_EQ(flags_of(failed(check)), Flags{}) << check;
}

TEST(RewardFlags, ExcessiveSpeedupOnlyWhenPassedAndAboveTenAndItZeroesNothing) {
  EXPECT_EQ(flags_of(passed_with_speedup(10.5)), Flags{"excessive_speedup"});
  EXPECT_EQ(flags_of(passed_with_speedup(1000)), Flags{"excessive_speedup"});
  EXPECT_EQ(flags_of(passed_with_speedup(10.0)), Flags{});  // above, not at
  EXPECT_EQ(flags_of(passed_with_speedup(9.9)), Flags{});
  EXPECT_EQ(flags_of(passed_with_speedup(20, /*available=*/false)), Flags{});
  VerifyResult not_passed = passed_with_speedup(20);
  not_passed.passed = false;
  not_passed.check = "mismatch";
  EXPECT_EQ(flags_of(not_passed), Flags{});
  EXPECT_FALSE(has_zeroing_flag({"excessive_speedup"}));
  EXPECT_FALSE(has_zeroing_flag({}));
  EXPECT_FALSE(has_zeroing_flag({"something_else"}));
  EXPECT_TRUE(has_zeroing_flag({"excessive_speedup", "input_copy"}));
}

// ---------------------------------------------------------------------------------------------
// Extraction.

const std::string kEntry = "kernel";
const std::string kK1 = "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    return x  # one\n";
const std::string kK2 = "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    return y  # two\n";
const std::string kK3 = "import neuronxcc.nki as nki\n\n@nki.jit\ndef kernel(x, y):\n    return x  # three\n";
const std::string kHelper = "def helper(a):\n    return a\n";

std::string fence(const std::string& body, const std::string& lang = "python") {
  return "```" + lang + "\n" + body + "```\n";
}

std::string tag(const json& call) {
  return "<tool_call>" + call.dump() + "</tool_call>";
}

json verify_call(const std::string& code, bool as_string = false) {
  json args = {{"kernel_code", code}};
  return {{"name", "verify"}, {"arguments", as_string ? json(args.dump()) : args}};
}

ExtractedKernels from_response(const std::string& text, const std::string& prompt = "") {
  Submission s;
  s.response = text;
  s.prompt = prompt;
  return extract_kernels(s, kEntry);
}

using Kernels = std::vector<std::string>;

TEST(RewardExtract, AFencedBlockIsTheKernel) {
  auto ex = from_response("Here is the kernel:\n" + fence(kK1) + "It adds.\n");
  EXPECT_EQ(ex.source, "response");
  EXPECT_EQ(ex.kernels, Kernels{kK1});
  // ```py, ```python3 and a bare fence mentioning nki count too; other languages do not.
  EXPECT_EQ(from_response(fence(kK1, "py")).kernels, Kernels{kK1});
  EXPECT_EQ(from_response(fence(kK1, "python3")).kernels, Kernels{kK1});
  EXPECT_EQ(from_response(fence(kK1, "")).kernels, Kernels{kK1});
  EXPECT_EQ(from_response(fence(kK1, "bash")).kernels, Kernels{});
  EXPECT_EQ(from_response(fence(kHelper, "")).kernels, Kernels{});  // bare, no nki: not Python to us
}

TEST(RewardExtract, TheBlocksDefiningTheEntryWin) {
  // A helper block after the kernel is not the answer.
  EXPECT_EQ(from_response(fence(kK1) + "and a helper:\n" + fence(kHelper)).kernels, Kernels{kK1});
  EXPECT_EQ(from_response(fence(kHelper) + fence(kK1)).kernels, Kernels{kK1});
  // A block that defines another function of a similar name does not define the entry.
  EXPECT_EQ(from_response(fence("def kernel_ref(x):\n    return x\n") + fence(kK2)).kernels, Kernels{kK2});
}

TEST(RewardExtract, WithoutAnEntryTheLastPythonBlockIsTheAnswer) {
  const std::string a = "def first(x):\n    return x\n", b = "def second(x):\n    return x\n";
  EXPECT_EQ(from_response(fence(a) + "then\n" + fence(b)).kernels, Kernels{b});
}

TEST(RewardExtract, AnUnclosedFenceRunsToTheEnd) {
  const std::string cut = "@nki.jit\ndef kernel(x, y):\n    return x";
  EXPECT_EQ(from_response("Answer:\n```python\n" + cut).kernels, Kernels{cut});
  EXPECT_EQ(from_response(fence(kK1) + "```python\n" + cut).kernels, (Kernels{kK1, cut}));
}

TEST(RewardExtract, ToolCallTagsWithArgumentsAsAnObjectOrAsJsonText) {
  auto ex = from_response("I will verify.\n" + tag(verify_call(kK1)) + "\n");
  EXPECT_EQ(ex.source, "response");
  EXPECT_EQ(ex.kernels, Kernels{kK1});
  EXPECT_EQ(from_response(tag(verify_call(kK2, /*as_string=*/true))).kernels, Kernels{kK2});
  // "parameters" is read like "arguments".
  EXPECT_EQ(from_response(tag({{"name", "compile"}, {"parameters", {{"kernel_code", kK3}}}})).kernels, Kernels{kK3});
  // Tags that carry no kernel, or no JSON, are skipped.
  EXPECT_EQ(from_response(tag({{"name", "lookup"}, {"arguments", {{"query", "nl.add"}}}})).kernels, Kernels{});
  EXPECT_EQ(from_response("<tool_call>{not json</tool_call>").kernels, Kernels{});
  EXPECT_EQ(from_response(tag({{"name", "verify"}, {"arguments", {{"kernel_code", ""}}}})).kernels, Kernels{});
  EXPECT_EQ(from_response(tag({{"name", "verify"}, {"arguments", {{"kernel_code", 42}}}})).kernels, Kernels{});
  EXPECT_EQ(from_response(tag({{"name", "verify"}, {"arguments", "{broken"}})).kernels, Kernels{});
  // An unclosed tag holding a whole JSON object still counts; a cut one does not.
  EXPECT_EQ(from_response("<tool_call>" + verify_call(kK1).dump()).kernels, Kernels{kK1});
  EXPECT_EQ(from_response("<tool_call>" + verify_call(kK1).dump().substr(0, 20)).kernels, Kernels{});
}

TEST(RewardExtract, AMultiTurnResponseGivesEveryKernelInTheOrderWritten) {
  // Turn 1 a fenced block, turn 2 a tool call, turn 3 a fenced block again.
  const std::string text = "turn 1\n" + fence(kK1) + "turn 2\n" + tag(verify_call(kK2)) + "\nturn 3\n" + fence(kK3);
  EXPECT_EQ(from_response(text).kernels, (Kernels{kK1, kK2, kK3}));
  // A tag before any block comes first although the tags are scanned after the blocks.
  EXPECT_EQ(from_response(tag(verify_call(kK1)) + "\n" + fence(kK2)).kernels, (Kernels{kK1, kK2}));
  // The last one is the answer, whichever form it took.
  EXPECT_EQ(from_response(fence(kK1) + tag(verify_call(kK2, true))).kernels.back(), kK2);
}

TEST(RewardExtract, ThePromptIsCutFromTheFrontOfTheResponse) {
  const std::string prompt = "Write a kernel like this example:\n" + fence(kK1) + "Your answer:\n";
  EXPECT_EQ(from_response(prompt + fence(kK2), prompt).kernels, Kernels{kK2});
  // The same text without its prompt given keeps the example.
  EXPECT_EQ(from_response(prompt + fence(kK2)).kernels, (Kernels{kK1, kK2}));
  // A response that does not start with the prompt is read whole.
  EXPECT_EQ(from_response("Sure.\n" + fence(kK2), "something else").kernels, Kernels{kK2});
  // A prompt holding the whole response leaves nothing.
  EXPECT_EQ(from_response(prompt, prompt).kernels, Kernels{});
}

TEST(RewardExtract, KernelCodeAndToolCallSubmissions) {
  Submission code;
  code.kernel_code = kK1;
  code.response = fence(kK2);  // kernel_code wins over any text
  auto ex = extract_kernels(code, kEntry);
  EXPECT_EQ(ex.source, "kernel_code");
  EXPECT_EQ(ex.kernels, Kernels{kK1});
  // The module is taken as it is, entry or not.
  code.kernel_code = kHelper;
  EXPECT_EQ(extract_kernels(code, kEntry).kernels, Kernels{kHelper});
  code.kernel_code = "";
  ex = extract_kernels(code, kEntry);
  EXPECT_EQ(ex.source, "kernel_code");
  EXPECT_TRUE(ex.kernels.empty());

  Submission call;
  call.tool_call = verify_call(kK2);
  ex = extract_kernels(call, kEntry);
  EXPECT_EQ(ex.source, "tool_call");
  EXPECT_EQ(ex.kernels, Kernels{kK2});
  call.tool_call = verify_call(kK3, /*as_string=*/true);
  EXPECT_EQ(extract_kernels(call, kEntry).kernels, Kernels{kK3});
  call.tool_call = json{{"name", "verify"}, {"arguments", {{"other", 1}}}};
  ex = extract_kernels(call, kEntry);
  EXPECT_EQ(ex.source, "tool_call");
  EXPECT_TRUE(ex.kernels.empty());
  call.tool_call = json::array({1, 2});
  EXPECT_TRUE(extract_kernels(call, kEntry).kernels.empty());
  call.tool_call = json{{"name", "verify"}};
  EXPECT_TRUE(extract_kernels(call, kEntry).kernels.empty());
}

TEST(RewardExtract, AnAnswerWithoutAKernelHasNone) {
  for (const char* text : {"", "I cannot write this kernel.", "Use nl.add on the tiles.", "```\nplain text\n```\n",
                           "inline ```python def kernel(x): pass``` on one line"}) {
    auto ex = from_response(text);
    EXPECT_EQ(ex.source, "response") << text;
    EXPECT_TRUE(ex.kernels.empty()) << text << " gave " << (ex.kernels.empty() ? "" : ex.kernels[0]);
  }
}

TEST(RewardExtract, AToolCallNestedTooDeeplyHoldsNoKernel) {
  // The JSON of a tag (and of string arguments) is depth-bounded like a request body.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(from_response("<tool_call>" + deep + "</tool_call>").kernels.empty());
  Submission call;
  call.tool_call = json{{"name", "verify"}, {"arguments", "{\"kernel_code\": " + deep + "}"}};
  EXPECT_TRUE(extract_kernels(call, kEntry).kernels.empty());
}

// ---------------------------------------------------------------------------------------------
// The result cache.

KernelScore scored(double correct) {
  KernelScore k;
  k.scored = true;
  k.components.format = 1;
  k.components.compile = 1;
  k.components.correct = correct;
  k.flags = {"excessive_speedup"};
  return k;
}

TEST(RewardResultCache, KeepsTheMostRecentlyUsedAndCountsHitsAndMisses) {
  RewardResultCache cache(2);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.get("a").has_value());
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(cache.hits(), 0);

  cache.put("a", scored(1));
  cache.put("b", scored(0));
  EXPECT_EQ(cache.size(), 2u);
  auto a = cache.get("a");  // a is now the most recent; b the least
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->components.correct, 1);
  EXPECT_EQ(a->flags, Flags{"excessive_speedup"});
  EXPECT_TRUE(a->scored);
  cache.put("c", scored(1));  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.get("b").has_value());
  EXPECT_TRUE(cache.get("a").has_value());
  EXPECT_TRUE(cache.get("c").has_value());
  EXPECT_EQ(cache.hits(), 3);
  EXPECT_EQ(cache.misses(), 2);

  // A put of a present key replaces its value, refreshes it and does not grow the cache.
  cache.put("a", scored(0));  // order: a, c
  EXPECT_EQ(cache.size(), 2u);
  cache.put("d", scored(1));  // evicts c
  EXPECT_FALSE(cache.get("c").has_value());
  auto a2 = cache.get("a");
  ASSERT_TRUE(a2.has_value());
  EXPECT_EQ(a2->components.correct, 0);
  EXPECT_TRUE(cache.get("d").has_value());
  EXPECT_EQ(cache.hits(), 5);
  EXPECT_EQ(cache.misses(), 3);
}

TEST(RewardResultCache, ACopyComesOutAndCapacityZeroKeepsNothing) {
  RewardResultCache cache(4);
  cache.put("k", scored(1));
  auto first = cache.get("k");
  ASSERT_TRUE(first);
  first->components.correct = 0;
  first->cached = true;
  auto second = cache.get("k");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->components.correct, 1);  // the stored value is untouched
  EXPECT_FALSE(second->cached);

  RewardResultCache none(0);
  none.put("k", scored(1));
  EXPECT_EQ(none.size(), 0u);
  EXPECT_FALSE(none.get("k").has_value());
  EXPECT_EQ(none.misses(), 1);
}

// ---------------------------------------------------------------------------------------------
// The JSON of a result (docs/serve.md).

TEST(RewardResultJson, AFailureHasTheSameShapeWithANullScore) {
  const RewardResult r = RewardResult::failure(Diagnostic::error("nkia_task_not_found", "no task 'x'"));
  EXPECT_EQ(r.status, "error");
  EXPECT_FALSE(r.score.has_value());
  const json j = r.to_json();
  for (const char* key :
       {"status", "score", "preset", "scores", "components", "flags", "verify", "error", "cached", "timings"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["score"].is_null());
  EXPECT_EQ(j["error"]["code"], "nkia_task_not_found");
  EXPECT_EQ(j["error"]["message"], "no task 'x'");
  EXPECT_TRUE(j["verify"].is_object());
  EXPECT_TRUE(j["components"]["speedup"].is_null());
  EXPECT_FALSE(j.contains("turns"));
}

TEST(RewardResultJson, TurnsAppearOnlyForMoreThanOneKernel) {
  RewardResult r;
  r.status = "ok";
  r.score = 1.5;
  r.preset = "nki";
  r.components = comp(1, 1, 2.0, 0.25);
  r.turns.push_back(scored(1));
  json j = r.to_json();
  EXPECT_EQ(j["score"], 1.5);
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_EQ(j["components"]["speedup"], 2.0);
  EXPECT_EQ(j["components"]["coverage"], 0.25);
  EXPECT_FALSE(j.contains("turns"));
  r.turns.push_back(scored(0));
  j = r.to_json();
  ASSERT_TRUE(j.contains("turns"));
  ASSERT_EQ(j["turns"].size(), 2u);
  EXPECT_EQ(j["turns"][1]["components"]["correct"], 0);
  EXPECT_EQ(j["turns"][0]["flags"], json::array({"excessive_speedup"}));
}

}  // namespace
}  // namespace nki_agent
