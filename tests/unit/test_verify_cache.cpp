// The result cache of verify (tasks/verify_cache.h): a kernel verified again unchanged and the same
// way is answered from the stored result, with the same verdict, check, diagnostic and speed; any
// change of the kernel, the task or the options is a miss; results the machine's load decides are
// not stored; a damaged file is a miss; the folder is kept under its limit, least recently used
// results first.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "support/cli_runner.h"
#include "support/shared_service.h"
#include "support/test_files.h"
#include "tasks/speed_cost.h"
#include "tasks/task.h"
#include "tasks/verify.h"
#include "tasks/verify_cache.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::Stderr;

const fs::path kTasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks";

// A folder of its own per test: references and results start empty.
std::string fresh_cache(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("verify_cache_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

nlohmann::json verify_json(const std::string& args, int* exit_code = nullptr) {
  CliRun r =
      testing::run_cli("--json verify " + args, Stderr::kDrop, "LSAN_OPTIONS=\"${LSAN_OPTIONS}:print_suppressions=0\"");
  if (exit_code) *exit_code = r.exit_code;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << args << "\n" << r.out;
  return j;
}

int result_files(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    n += it->is_regular_file() && it->path().extension() == ".json";
  return n;
}

TEST(VerifyCache, AnUnchangedKernelIsAnsweredFromTheStoredResult) {
  const std::string cache = fresh_cache("hit");
  const std::string add = (kTasks / "add_fp32").string();
  const std::string common = "--task " + add + " --workers 2 --seeds 2 --cache " + cache + " ";
  const std::string kernel = (fs::path(cache) / "kernel.py").string();
  fs::copy_file(add + "/baseline.py", kernel);

  int rc = -1;
  auto first = verify_json(common + kernel, &rc);
  ASSERT_EQ(rc, 0) << first.dump(2);
  EXPECT_FALSE(first["verify"].contains("from_result_cache"));
  EXPECT_EQ(result_files(result_cache_dir_for(cache)), 1);

  auto second = verify_json(common + kernel, &rc);
  ASSERT_EQ(rc, 0) << second.dump(2);
  EXPECT_EQ(second["verify"]["from_result_cache"], true);
  EXPECT_EQ(second["verify"]["passed"], true);
  EXPECT_EQ(second["verify"]["cases_passed"], first["verify"]["cases_passed"]);
  EXPECT_EQ(second["verify"]["speed"], first["verify"]["speed"]);
  EXPECT_EQ(second["verify"]["cases"], first["verify"]["cases"]);
  EXPECT_EQ(second["verify"]["verified_seconds"], first["verify"]["seconds"]);
  EXPECT_LT(second["verify"]["seconds"].get<double>(), first["verify"]["seconds"].get<double>());

  // The debug log says it too.
  CliRun logged = testing::run_cli("--log-level debug verify " + common + kernel, Stderr::kSeparate);
  EXPECT_EQ(logged.exit_code, 0);
  EXPECT_NE(logged.err.find("answered from the result cache"), std::string::npos) << logged.err;

  // The human form says where the answer came from.
  CliRun text = testing::run_cli("verify " + common + kernel, Stderr::kDrop);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("answered from the result cache"), std::string::npos) << text.out;

  // Misses: other options, the kernel's text changed, --no-result-cache.
  EXPECT_FALSE(
      verify_json("--task " + add + " --workers 2 --seeds 1 --cache " + cache + " " + kernel)["verify"].contains(
          "from_result_cache"));
  EXPECT_FALSE(verify_json(common + "--no-speed " + kernel)["verify"].contains("from_result_cache"));
  EXPECT_FALSE(verify_json(common + "--no-result-cache " + kernel)["verify"].contains("from_result_cache"));
  std::ofstream(kernel, std::ios::app) << "\n# the same kernel with one more comment\n";
  EXPECT_FALSE(verify_json(common + kernel)["verify"].contains("from_result_cache"));
  EXPECT_EQ(verify_json(common + kernel)["verify"]["from_result_cache"], true);
}

// A failing kernel's stored result keeps its check, message, diagnostic and exit code.
TEST(VerifyCache, AFailureIsStoredWithItsCheckAndDiagnostic) {
  const std::string cache = fresh_cache("fail");
  const std::string add = (kTasks / "add_fp32").string();
  const std::string args =
      "--task " + add + " --workers 2 --seeds 2 --cache " + cache + " " + (kTasks / "hacks" / "zeros_add.py").string();
  int rc = -1;
  auto first = verify_json(args, &rc);
  ASSERT_EQ(rc, 1);
  auto second = verify_json(args, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(second["verify"]["from_result_cache"], true);
  EXPECT_EQ(second["ok"], false);
  EXPECT_EQ(second["verify"]["check"], "zero_output");
  EXPECT_EQ(second["verify"]["message"], first["verify"]["message"]);
  EXPECT_EQ(second["diagnostics"], first["diagnostics"]);
  EXPECT_EQ(second["verify"]["cases"], first["verify"]["cases"]);
}

class VerifyCacheApi : public testing::SharedServiceTest {};

// to_json, then verify_result_from_json: the same JSON again, for a pass and a failure.
TEST_F(VerifyCacheApi, StoredResultsReadBackWhole) {
  auto task = load_task((kTasks / "add_fp32").string());
  ASSERT_TRUE(task) << task.error().format();
  VerifyOptions vo;
  vo.seeds = 2;
  vo.parallel = 2;
  vo.reference.cache_dir = testing::shared_cache();
  vo.speed = cost_speed_model();
  for (const fs::path& kernel : {kTasks / "add_fp32" / "baseline.py", kTasks / "hacks" / "floor_tiles_add.py"}) {
    auto files = load_kernel_files(kernel.string());
    ASSERT_TRUE(files) << files.error().format();
    auto r = verify_kernel(*task, *files, *service_, vo);
    ASSERT_TRUE(r) << r.error().format();
    const nlohmann::json j = r->to_json();
    EXPECT_EQ(verify_result_from_json(j).to_json().dump(), j.dump()) << kernel;  // dump: NaN is null there
    EXPECT_EQ(verify_result_from_json(j).format(), r->format()) << kernel;
  }
  // Garbage reads as an empty failing result, never throws.
  EXPECT_FALSE(verify_result_from_json(nlohmann::json::parse(R"({"passed": "yes", "cases": [1, null, {}]})")).passed);
  EXPECT_FALSE(verify_result_from_json(nlohmann::json()).passed);
}

TEST(VerifyCacheRules, WhatTheMachinesLoadDecidesIsNotStored) {
  VerifyOptions vo;
  VerifyResult r;
  r.passed = false;
  r.check = "kernel_error";
  EXPECT_TRUE(verify_result_repeatable(r, vo));
  for (const char* code : {"nkia_sandbox_timeout", "nkia_sandbox_cpu_limit", "nkia_sandbox_memory_limit"}) {
    VerifyResult t = r;
    t.diagnostic = Diagnostic::error(code, "limit", "");
    EXPECT_FALSE(verify_result_repeatable(t, vo)) << code;
    VerifyResult c = r;
    c.cases.emplace_back();
    c.cases.back().kernel_error = Diagnostic::error(code, "limit", "");
    EXPECT_FALSE(verify_result_repeatable(c, vo)) << code;
  }
  VerifyResult compile = r;
  compile.diagnostic = Diagnostic::error("err_unsupported_memory", "a compile error", "");
  EXPECT_TRUE(verify_result_repeatable(compile, vo));
  // A pass whose speed was asked for and not measured: its timing run failed.
  VerifyResult pass;
  pass.passed = true;
  EXPECT_TRUE(verify_result_repeatable(pass, vo));
  vo.speed = cost_speed_model();
  EXPECT_FALSE(verify_result_repeatable(pass, vo));
  pass.speed.available = true;
  EXPECT_TRUE(verify_result_repeatable(pass, vo));
}

TEST(VerifyCacheRules, KeysCoverTheTaskTheKernelAndTheOptions) {
  ::setenv("NKIA_WORKER", NKIA_WORKER_BIN, 1);  // the simulator's identity takes in its worker program
  auto task = load_task((kTasks / "add_fp32").string());
  ASSERT_TRUE(task) << task.error().format();
  auto files = load_kernel_files((kTasks / "add_fp32" / "baseline.py").string());
  ASSERT_TRUE(files) << files.error().format();
  VerifyOptions vo;
  vo.speed = cost_speed_model();
  const std::string key = verify_result_key(*task, *files, vo);
  ASSERT_EQ(key.size(), 64u);
  EXPECT_EQ(verify_result_key(*task, *files, vo), key);  // deterministic

  auto differs = [&](const Task& t, const KernelFiles& f, const VerifyOptions& o) {
    return verify_result_key(t, f, o) != key;
  };
  KernelFiles edited = *files;
  edited.files.begin()->second += "\n";
  EXPECT_TRUE(differs(*task, edited, vo));
  Task other = *task;
  other.hash = "another task text";
  EXPECT_TRUE(differs(other, *files, vo));
  for (auto change : std::vector<std::function<void(VerifyOptions&)>>{
           [](VerifyOptions& o) { o.seeds = 3; }, [](VerifyOptions& o) { o.seed_base = 7; },
           [](VerifyOptions& o) { o.shape_sets = {"prompt"}; }, [](VerifyOptions& o) { o.kernel_seconds = 5; },
           [](VerifyOptions& o) { o.kernel_memory_mib = 1024; }, [](VerifyOptions& o) { o.static_policy = false; },
           [](VerifyOptions& o) { o.fail_fast = false; }, [](VerifyOptions& o) { o.max_compute_bytes = 1; },
           [](VerifyOptions& o) { o.speed = SpeedModel(); }, [](VerifyOptions& o) { o.speed.identity = "hardware:x"; },
           [](VerifyOptions& o) { o.reference.threads = 2; }}) {
    VerifyOptions o = vo;
    change(o);
    EXPECT_TRUE(differs(*task, *files, o));
  }
  // A speed model nothing names cannot be keyed: such results are never cached.
  VerifyOptions anonymous = vo;
  anonymous.speed.identity.clear();
  EXPECT_EQ(verify_result_key(*task, *files, anonymous), "");
}

std::string fake_key(int i) {
  return fmt::format("{:064x}", i + 1);
}

TEST(VerifyCacheRules, DamagedFilesAreMissesAndTheFolderKeepsItsLimit) {
  const std::string dir = fresh_cache("lru") + "/results";
  VerifyResultCache cache(dir);
  VerifyOptions vo;  // no speed model: every result below is repeatable
  VerifyResult r;
  r.task = "T_001_add";
  r.kernel = "k.py";
  r.passed = false;
  r.check = "mismatch";
  r.message = std::string(2000, 'x');  // each stored result takes a little over 2 KB
  r.seconds = 1.5;

  cache.put(fake_key(0), r, vo);
  auto back = cache.get(fake_key(0));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->from_result_cache);
  EXPECT_EQ(back->message, r.message);
  EXPECT_EQ(back->verified_seconds, 1.5);
  EXPECT_FALSE(cache.get(fake_key(1)));
  EXPECT_FALSE(cache.get("not a key"));

  // Truncated, or another key's content under this name: misses.
  const fs::path file = fs::path(dir) / fake_key(0).substr(0, 2) / (fake_key(0) + ".json");
  ASSERT_TRUE(fs::exists(file));
  fs::resize_file(file, fs::file_size(file) / 2);
  EXPECT_FALSE(cache.get(fake_key(0)));
  cache.put(fake_key(1), r, vo);
  fs::copy_file(fs::path(dir) / fake_key(1).substr(0, 2) / (fake_key(1) + ".json"), file,
                fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.get(fake_key(0)));

  // 20 KB of limit: 6 to 9 results. Result 20, read after result 25 was stored, outlives 21 and 22.
  ::setenv(kResultCacheMaxBytesEnv, "20K", 1);
  for (int i = 2; i < 30; ++i) {
    cache.put(fake_key(i), r, vo);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (i == 25) {
      ASSERT_TRUE(cache.get(fake_key(20)));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ::unsetenv(kResultCacheMaxBytesEnv);
  int64_t bytes = 0;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) bytes += static_cast<int64_t>(e.file_size());
  EXPECT_LE(bytes, 20 * 1024);
  EXPECT_TRUE(cache.get(fake_key(29)));  // the newest
  EXPECT_TRUE(cache.get(fake_key(20)));  // used recently
  EXPECT_FALSE(cache.get(fake_key(21)));
  EXPECT_FALSE(cache.get(fake_key(2)));

  // An unwritable folder: put is skipped, get misses, nothing throws.
  VerifyResultCache nowhere("/proc/nki-agent-results");
  nowhere.put(fake_key(5), r, vo);
  EXPECT_FALSE(nowhere.get(fake_key(5)));
}

}  // namespace
}  // namespace nki_agent
