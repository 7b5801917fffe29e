// `nki-agent profile`, end to end through the CLI and the sandboxed worker: the text summary, the
// JSON object, the Perfetto trace file, --from-trace on a recorded trace (same numbers as a direct
// profile), timing-only by default for large inputs, --target and --hardware, and every bad input
// (a missing entry, a malformed hardware file, absurd shapes, a kernel with nothing to profile) as
// a Diagnostic with the documented exit code, never a crash.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/calibrate.h"
#include "cost/hardware.h"
#include "support/cli_runner.h"

namespace nki_agent {
namespace {

using testing::CliRun;

CliRun cli(const std::string& args, bool with_stderr = false) {
  return testing::run_cli(args, with_stderr ? testing::Stderr::kMerge : testing::Stderr::kDrop);
}

nlohmann::json json_of(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not one JSON object: " << text.substr(0, 2000);
  return j;
}

std::string kernel(const std::string& name) {
  return std::string(NKIA_SOURCE_DIR) + "/tests/kernels/perf/" + name;
}

const std::string kTiled = kernel("matmul_tiled.py") + " --entry matmul_tiled";
const std::string kSmall = " --shapes 'lhsT=bfloat16[256,256]' 'rhs=bfloat16[256,1024]'";

TEST(CliProfile, TextSummary) {
  CliRun r = cli("profile " + kTiled + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* k : {"on trn1 (NeuronCore-v2, computed on random inputs)", "latency", "HFU", "roofline", "hbm",
                        "engines", "tensor", "hot lines", "matmul_tiled.py:", "insights", "small_dma"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k << "\n" << r.out;
}

TEST(CliProfile, JsonAndPerfettoTrace) {
  const std::string trace = ::testing::TempDir() + "/profile_trace.json";
  CliRun r = cli("--json profile " + kTiled + kSmall + " --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = json_of(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["timing_only"], false);  // small inputs run on real data
  EXPECT_EQ(j["target"], "trn1");
  EXPECT_GT(j["summary"]["total_time_ns"].get<double>(), 0);
  EXPECT_EQ(j["summary"]["matmul_instructions"], 2 * 2 * 2);
  EXPECT_GT(j["summary"]["hfu_estimated_percent"].get<double>(), 0);
  EXPECT_LE(j["summary"]["hfu_estimated_percent"].get<double>(), 100);
  EXPECT_FALSE(j["hot_lines"].empty());
  EXPECT_EQ(j["trace_file"], trace);
  std::ifstream f(trace);
  std::stringstream ss;
  ss << f.rdbuf();
  auto doc = json_of(ss.str());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  int matmuls = 0;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "nc_matmul") ++matmuls;
  EXPECT_EQ(matmuls, 8);
  std::remove(trace.c_str());
}

TEST(CliProfile, RecordedTraceGivesTheSameProfile) {
  const std::string recorded = ::testing::TempDir() + "/recorded.json";
  ASSERT_EQ(cli("check " + kTiled + kSmall + " --trace " + recorded).exit_code, 0);
  auto direct = json_of(cli("--json profile " + kTiled + kSmall + " --timing-only").out);
  auto replay = json_of(cli("--json profile --from-trace " + recorded).out);
  EXPECT_EQ(direct["timing_only"], true);
  EXPECT_DOUBLE_EQ(direct["summary"]["total_time_ns"].get<double>(), replay["summary"]["total_time_ns"].get<double>());
  // Another target on the same trace: trn2's faster DMAs finish this DMA-bound kernel sooner.
  auto trn2 = json_of(cli("--json profile --from-trace " + recorded + " --target trn2").out);
  EXPECT_EQ(trn2["target"], "trn2");
  EXPECT_LT(trn2["summary"]["total_time_ns"].get<double>(), replay["summary"]["total_time_ns"].get<double>());
  std::remove(recorded.c_str());
}

TEST(CliProfile, LargeInputsAreTimingOnly) {
  auto j =
      json_of(cli("--json profile " + kTiled + " --shapes 'lhsT=bfloat16[1024,1024]' 'rhs=bfloat16[1024,2048]'").out);
  EXPECT_EQ(j["timing_only"], true);
  EXPECT_EQ(j["summary"]["matmul_instructions"], 8 * 4 * 8);
}

TEST(CliProfile, CustomHardwareDescription) {
  // The embedded trn1 description, with DMA engines twice as fast.
  CliRun base = cli("--json profile " + kTiled + kSmall);
  ASSERT_EQ(base.exit_code, 0);
  std::ifstream in(std::string(NKIA_SOURCE_DIR) + "/data/targets/trn1.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  auto trn1 = hardware_for_target("trn1");
  ASSERT_TRUE(trn1) << trn1.error().format();
  auto fast_text = set_target_numbers(ss.str(), {{"dma.bytes_per_ns", 2 * trn1->dma.bytes_per_ns}}, "fast_dma.toml");
  ASSERT_TRUE(fast_text) << fast_text.error().format();
  const std::string toml = *fast_text;
  const std::string path = ::testing::TempDir() + "/fast_dma.toml";
  std::ofstream(path) << toml;
  auto fast = json_of(cli("--json profile " + kTiled + kSmall + " --hardware " + path).out);
  EXPECT_LT(fast["summary"]["total_time_ns"].get<double>(),
            json_of(base.out)["summary"]["total_time_ns"].get<double>());
  std::remove(path.c_str());
}

TEST(CliProfile, BadInputsAreDiagnostics) {
  EXPECT_EQ(cli("profile " + kernel("matmul_tiled.py") + kSmall).exit_code, 2);  // no --entry
  EXPECT_EQ(cli("profile --from-trace x.json " + kTiled).exit_code, 2);          // both
  EXPECT_EQ(cli("profile " + kTiled + kSmall + " --target trn9").exit_code, 2);

  const std::string bad = ::testing::TempDir() + "/bad.toml";
  std::ofstream(bad) << "[target\nname = 1\n";
  CliRun r = cli("--json profile " + kTiled + kSmall + " --hardware " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(json_of(r.out)["diagnostics"][0]["code"], "nkia_hardware_syntax");
  std::remove(bad.c_str());

  r = cli("--json profile " + kTiled + " --shapes 'lhsT=bfloat16[99999999999,99999999999]' 'rhs=bfloat16[2,2]'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(json_of(r.out)["diagnostics"].empty());

  r = cli("--json profile --from-trace /nonexistent.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(json_of(r.out)["diagnostics"][0]["code"], "nkia_trace_unreadable");

  // A host function that launches no kernel has nothing to profile.
  const std::string empty = ::testing::TempDir() + "/empty_kernel.py";
  std::ofstream(empty) << "import numpy as np\n\ndef k(a):\n    return np.zeros((2, 2), dtype=np.float32)\n";
  r = cli("--json profile " + empty + " --entry k --shapes 'a=float32[128,128]'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(json_of(r.out)["diagnostics"][0]["code"], "nkia_profile_empty");
  std::remove(empty.c_str());

  // A kernel error is the kernel's Diagnostic, as with `check`.
  r = cli("--json profile " + kernel("matmul_tiled.py") + " --entry no_such_function" + kSmall);
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace nki_agent
