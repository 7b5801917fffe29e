// --log-level: the pipeline's stages logged on stderr, and only when asked. A verification of a small
// task at debug level names the command, the worker pool, each kernel call with its duration, the
// verify stages (cases, reference, speed) and the cost model's stages; at the default level the
// same run logs nothing; and under --json stdout stays one JSON object whatever the level.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "support/cli_runner.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

using testing::CliRun;
using testing::Stderr;

const fs::path kAdd = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks" / "add_fp32";

// Every run verifies (--no-result-cache): a stored answer would run none of the stages logged.
CliRun verify(const std::string& flags) {
  const std::string cache = (fs::path(NKIA_CLI).parent_path() / "test-cache" / "references").string();
  return testing::run_cli(flags + " verify --task " + kAdd.string() + " " + (kAdd / "baseline.py").string() +
                              " --seeds 1 --workers 1 --no-result-cache",
                          Stderr::kSeparate, "NKIA_REFERENCE_CACHE=" + cache);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The log lines ("[12:00:00.000] [info] ...") in a stream. Only they count: a sanitizer build's
// leak checker also reports on stderr when the process exits.
std::string log_lines(const std::string& err) {
  static const std::regex level_re(R"(\[(trace|debug|info|warning|error|critical)\])");
  std::string out, line;
  std::istringstream in(err);
  while (std::getline(in, line))
    if (std::regex_search(line, level_re)) out += line + "\n";
  return out;
}

TEST(CliLogging, DebugLogsEveryStageOnStderr) {
  CliRun r = verify("--json --log-level debug");
  ASSERT_EQ(r.exit_code, 0) << r.out << "\nstderr:\n" << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "stdout is not one JSON object:\n" << r.out;
  EXPECT_TRUE(j.value("ok", false));
  for (const char* stage :
       {"[info] nki-agent", "/baseline.py begins", "worker pool: starting 1 worker", "worker pool: 1 worker(s) ready",
        "kernel call: baseline.py 'kernel' begins", "kernel call: baseline.py 'kernel' ends in",
        "verify T_001_add_fp32: ", "speed of the candidate", "cost model: lowered", "cost model: scheduled",
        "worker pool: stopping"})
    EXPECT_TRUE(has(r.err, stage)) << "no '" << stage << "' in stderr:\n" << r.err;
  EXPECT_TRUE(has(r.err, "reference ")) << r.err;
  EXPECT_TRUE(has(r.err, "[debug]")) << r.err;
  EXPECT_FALSE(has(r.out, "[debug]")) << r.out;
}

TEST(CliLogging, InfoLogsTheCommandButNoDebugLines) {
  CliRun r = verify("--log-level info");
  ASSERT_EQ(r.exit_code, 0) << r.out << "\nstderr:\n" << r.err;
  EXPECT_TRUE(has(r.err, "[info] nki-agent")) << r.err;
  EXPECT_FALSE(has(r.err, "[debug]")) << r.err;
}

TEST(CliLogging, TheDefaultLevelLogsNothing) {
  CliRun r = verify("");
  ASSERT_EQ(r.exit_code, 0) << r.out << "\nstderr:\n" << r.err;
  EXPECT_TRUE(has(r.out, "PASS")) << r.out;
  EXPECT_EQ(log_lines(r.err), "") << r.err;
  // NKIA_LOG sets the level when --log-level is not given.
  CliRun env = testing::run_cli("--log-level off info", Stderr::kSeparate, "NKIA_LOG=debug");
  EXPECT_EQ(env.exit_code, 0);
  EXPECT_EQ(log_lines(env.err), "") << env.err;
  CliRun env_debug = testing::run_cli("info", Stderr::kSeparate, "NKIA_LOG=debug");
  EXPECT_EQ(env_debug.exit_code, 0);
  EXPECT_TRUE(has(env_debug.err, "nki-agent")) << env_debug.err;
}

}  // namespace
}  // namespace nki_agent
