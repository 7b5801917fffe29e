// nkia-label: slow
// Every task that exists at test time — tests/tasks/* and tasks/nkibench/** — is sound
// (tasks/task_check.h): its task.toml agrees with task.py, every learned weight reaches the kernel,
// its baseline passes on every seed and shape set, its reference is deterministic across two
// worker processes (one without the cache), and its reference outputs are not degenerate and
// depend on the seed. One test per task, so ctest can run, time and report them one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/kernel_service.h"
#include "tasks/task.h"
#include "tasks/task_check.h"
#include "tasks/task_dirs.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> all_task_dirs() {
  std::vector<std::string> out;
  for (const char* root : {"tests/tasks", "tasks/nkibench"}) {
    fs::path p = fs::path(NKIA_SOURCE_DIR) / root;
    std::error_code ec;
    if (!fs::is_directory(p, ec)) continue;
    if (auto dirs = find_task_dirs(p.string())) out.insert(out.end(), dirs->begin(), dirs->end());
  }
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).filename().string();
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

class TaskSoundness : public ::testing::TestWithParam<std::string> {};

TEST_P(TaskSoundness, BaselinePassesReferenceDeterministicAndNotDegenerate) {
  auto task = load_task(GetParam());
  ASSERT_TRUE(task) << task.error().format();
  KernelServiceOptions so;
  so.workers = 2;
  so.worker_path = NKIA_WORKER_BIN;
  auto service = KernelService::create(so);
  ASSERT_TRUE(service) << service.error().format();
  TaskCheckOptions co;
  co.verify.reference.cache_dir = (fs::path(NKIA_CLI).parent_path() / "test-cache" / "references").string();
  co.verify.fail_fast = true;
  auto r = check_task(*task, **service, co);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_TRUE(r->passed) << r->format();
  if (r->baseline) {
    EXPECT_TRUE(r->baseline->passed) << r->baseline->format();
    EXPECT_EQ(r->baseline->cases_run, r->baseline->cases_total);
  }
  std::printf("%s: %s in %.1f s\n", task->label().c_str(), r->passed ? "sound" : "PROBLEMS", r->seconds);
}

INSTANTIATE_TEST_SUITE_P(AllTasks, TaskSoundness, ::testing::ValuesIn(all_task_dirs()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TaskSoundness);

}  // namespace
}  // namespace nki_agent
