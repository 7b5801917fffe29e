// The cost model's calibration kernels: the four steps of the NKI matrix multiplication tutorial
// (tests/kernels/perf/, our own code), profiled through the CLI on trn1. Their published ranking
// (tiled > hoisted loads > blocked free dims > blocked all dims) must hold; this fast test uses a
// 2048^3 problem, test_cost_calibration_full the published [4096,8192] @ [8192,8192] with the
// +-20% bounds (docs/cost-model.md has the table).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace nki_agent {
namespace {

double profile_ms(const std::string& name, const std::string& shapes) {
  const std::string cmd = std::string(NKIA_CLI) + " --json profile " + NKIA_SOURCE_DIR + "/tests/kernels/perf/matmul_" +
                          name + ".py --entry matmul_" + name + " --timing-only --target trn1 --shapes " + shapes +
                          " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while (p && (n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  if (p) pclose(p);
  auto j = nlohmann::json::parse(out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << name << ": " << out.substr(0, 500);
  if (j.is_discarded() || !j.value("ok", false)) {
    ADD_FAILURE() << name << ": " << out.substr(0, 1000);
    return -1;
  }
  return j["summary"]["total_time_ns"].get<double>() / 1e6;
}

TEST(CostCalibration, TutorialRankingHoldsAt2048Cubed) {
  const std::string shapes = "'lhsT=bfloat16[2048,2048]' 'rhs=bfloat16[2048,2048]'";
  const double tiled = profile_ms("tiled", shapes);
  const double hoisted = profile_ms("hoisted", shapes);
  const double block_free = profile_ms("block_free", shapes);
  const double block_all = profile_ms("block_all", shapes);
  std::printf("2048^3 bf16 on trn1: tiled %.3f ms, hoisted %.3f ms, block_free %.3f ms, block_all %.3f ms\n", tiled,
              hoisted, block_free, block_all);
  EXPECT_GT(tiled, hoisted);
  EXPECT_GT(hoisted, block_free);
  EXPECT_GT(block_free, block_all);
  EXPECT_GT(block_all, 0);
}

}  // namespace
}  // namespace nki_agent
