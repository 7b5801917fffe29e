// nkia-label: slow
// Hand-written fused kernels of NKIBench Level-2 and Level-3 tasks (tests/tasks/fused/, each naming
// its task with `# task: L2_0NN`) pass verification and beat the task's eager-style baseline (one kernel
// per PyTorch operation, intermediates through HBM) under the cost model: the baselines leave
// real speed on the table, and the verifier pays for it. One test per kernel; the speedups are
// printed and written down in docs/tasks.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/shared_service.h"
#include "tasks/speed_cost.h"
#include "tasks/task.h"
#include "tasks/task_dirs.h"
#include "tasks/verify.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const fs::path kFused = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks" / "fused";
const fs::path kRoot = fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench";

std::vector<std::string> fused_kernels() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kFused, ec))
    if (e.path().extension() == ".py") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string task_of(const std::string& file) {
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::smatch m;
  const std::string text = ss.str();
  return std::regex_search(text, m, std::regex("# task: (\\S+)")) ? m[1].str() : std::string();
}

class FusedKernels : public testing::SharedServiceTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(FusedKernels, PassAndBeatTheEagerBaseline) {
  const std::string id = task_of(GetParam());
  ASSERT_FALSE(id.empty()) << GetParam() << " lacks '# task:'";
  auto dir = resolve_task_dir(id, kRoot.string());
  ASSERT_TRUE(dir) << dir.error().format();
  auto task = load_task(*dir);
  ASSERT_TRUE(task) << task.error().format();
  auto files = load_kernel_files(GetParam());
  ASSERT_TRUE(files) << files.error().format();
  VerifyOptions vo;
  vo.reference.cache_dir = (fs::path(NKIA_CLI).parent_path() / "test-cache" / "references").string();
  vo.parallel = 2;
  vo.speed = cost_speed_model();
  auto r = verify_kernel(*task, *files, *service_, vo);
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_TRUE(r->passed) << r->format();
  ASSERT_TRUE(r->speed.available) << r->speed.reason;
  std::printf("%s: %.2f us fused, %.2f us baseline, speedup %.2fx\n", task->label().c_str(),
              r->speed.candidate_seconds * 1e6, r->speed.baseline_seconds * 1e6, r->speed.speedup);
  EXPECT_GT(r->speed.speedup, 1.0) << r->format();
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).stem().string();
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(NKIBench, FusedKernels, ::testing::ValuesIn(fused_kernels()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FusedKernels);

}  // namespace
}  // namespace nki_agent
