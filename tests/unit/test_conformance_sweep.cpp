// nkia-label: slow (the coverage sweep over the public NKI repositories: a few minutes)
//
// Runs the coverage sweep (tests/conformance/sweep/sweep.py, docs/conformance.md "Coverage sweep")
// over the git mirrors of the public NKI repositories, when this machine has them (the folder named
// by NKIA_MIRROR, else /work/.mirror; skipped otherwise), with this build's nki-agent. Fails on any
// internal error, crash or hang of nki-agent on a public kernel, and when fewer kernels trace than
// the manifest's TRACED_FLOOR (the count docs/conformance.md records): a drop in coverage.
// It never writes upstream code anywhere but the sweep's own scratch folders.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

namespace fs = std::filesystem;

namespace {

std::string mirror_dir() {
  const char* env = std::getenv("NKIA_MIRROR");
  return env && *env ? std::string(env) : std::string("/work/.mirror");
}

bool has_mirrors(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "aws-neuron+aws-neuron-sdk" / "repo" / "HEAD", ec) ||
         fs::exists(dir / "aws-neuron+nki-library" / "repo" / "HEAD", ec);
}

// Runs a shell command; returns its exit status and appends its output to `out`.
int run_command(const std::string& cmd, std::string& out) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

}  // namespace

TEST(ConformanceSweep, NoInternalErrorAndNoDropInTracedKernels) {
  const fs::path mirror = mirror_dir();
  if (!has_mirrors(mirror)) GTEST_SKIP() << "no git mirrors of the public NKI repositories under " << mirror;
  const fs::path script = fs::path(NKIA_SOURCE_DIR) / "tests" / "conformance" / "sweep" / "sweep.py";
  ASSERT_TRUE(fs::exists(script)) << script;
  const fs::path json_path = fs::temp_directory_path() / ("nkia-sweep-" + std::to_string(::getpid()) + ".json");
  std::string out;
  const int rc = run_command("/usr/bin/python3 " + quote(script.string()) + " --mirror " + quote(mirror.string()) +
                                 " --bin " + quote(NKIA_CLI) + " --json " + quote(json_path.string()),
                             out);
  std::ifstream f(json_path);
  ASSERT_TRUE(f.good()) << "the sweep wrote no JSON (exit " << rc << "):\n" << out;
  const nlohmann::json report = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  f.close();
  fs::remove(json_path);
  ASSERT_FALSE(report.is_discarded()) << "the sweep's JSON does not parse:\n" << out;

  const nlohmann::json all = report["summary"].value("all", nlohmann::json::object());
  const int traced = all.value("traced", 0);
  const int internal = all.value("internal", 0);
  const int floor = report.value("traced_floor", 0);
  for (const auto& k : report["kernels"])
    EXPECT_NE(k.value("class", ""), "internal")
        << k.value("id", "?") << ": " << k.value("cause", "") << "\n  " << k.value("diagnostic", "");
  EXPECT_EQ(internal, 0);
  EXPECT_GE(traced, floor) << "fewer public kernels trace than the manifest records (TRACED_FLOOR)";
  EXPECT_GT(floor, 0) << "the manifest records no traced count";
  EXPECT_EQ(rc, 0) << out;
}
