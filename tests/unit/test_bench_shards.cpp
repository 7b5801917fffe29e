// bench --shard I/N and `bench merge`, bench --samples K, and the results database's migration.
// The shards of a baselines-only bench (no model) over small NKIBench Level-1 tasks, merged, equal
// the unsharded run row for row (times aside); merge refuses runs of different benchmarks; K
// samples are K rows with distinct seeds and a pass@k table; a database of the first schema opens,
// its rows read as sample 0.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "agent/bench.h"
#include "agent/store.h"
#include "report/report.h"
#include "support/cli_runner.h"
#include "support/test_files.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::shared_cache;

const fs::path kSource = NKIA_SOURCE_DIR;

class BenchShards : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nkia-shards-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  testing::CliRun cli(const std::string& args) { return testing::run_cli(args, testing::Stderr::kMerge); }

  // A baselines-only bench over three small Level-1 tasks into dir_/<name>.sqlite.
  testing::CliRun bench(const std::string& name, const std::string& extra) {
    return testing::run_cli("--json bench --tasks " + (kSource / "tasks" / "nkibench").string() +
                            " --only L1_001 --only L1_002 --only L1_007 --jobs 2 --workers 2 --db " +
                            (dir_ / (name + ".sqlite")).string() + " --out " + (dir_ / name).string() + " --cache " +
                            shared_cache() + " " + extra);
  }

  std::vector<TaskRow> rows(const std::string& name, std::string* key = nullptr) {
    auto store = ResultStore::open((dir_ / (name + ".sqlite")).string());
    EXPECT_TRUE(store);
    if (!store) return {};
    auto runs = (*store)->runs();
    EXPECT_TRUE(runs && runs->size() == 1u);
    if (!runs || runs->empty()) return {};
    if (key) *key = runs->front().key;
    auto r = (*store)->results(runs->front().run_id);
    EXPECT_TRUE(r);
    return r ? *r : std::vector<TaskRow>{};
  }

  fs::path dir_;
};

// The stored result without its times.
json timeless(json j) {
  for (const char* k : {"seconds", "model_seconds", "tool_seconds"}) j.erase(k);
  return j;
}

TEST_F(BenchShards, ShardsMergedEqualTheUnshardedRun) {
  auto full = bench("full", "--run full");
  ASSERT_EQ(full.exit_code, 0) << full.out;
  auto s0 = bench("s0", "--shard 0/2");
  ASSERT_EQ(s0.exit_code, 0) << s0.out;
  auto s1 = bench("s1", "--shard 1/2");
  ASSERT_EQ(s1.exit_code, 0) << s1.out;
  // The shard is the id-sorted list's every second task: L1_001 and L1_007, then L1_002.
  std::set<std::string> ids0, ids1;
  for (const auto& r : rows("s0")) ids0.insert(r.task_id);
  for (const auto& r : rows("s1")) ids1.insert(r.task_id);
  EXPECT_EQ(ids0, (std::set<std::string>{"L1_001", "L1_007"}));
  EXPECT_EQ(ids1, (std::set<std::string>{"L1_002"}));

  const std::string all = (dir_ / "all.sqlite").string();
  auto m =
      cli("--json bench merge " + (dir_ / "s0.sqlite").string() + " " + (dir_ / "s1.sqlite").string() + " -o " + all);
  ASSERT_EQ(m.exit_code, 0) << m.out;
  const json mj = json::parse(m.out, nullptr, false);
  ASSERT_FALSE(mj.is_discarded()) << m.out;
  EXPECT_EQ(mj["runs"], 2);
  EXPECT_EQ(mj["rows"], 3);
  EXPECT_EQ(mj["duplicates"], 0);

  std::string full_key, merged_key;
  const auto a = rows("full", &full_key);
  const auto b = rows("all", &merged_key);
  EXPECT_EQ(full_key, merged_key);  // the merged run is the unsharded benchmark: --resume finds it
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].task_id);
    EXPECT_EQ(a[i].task_id, b[i].task_id);
    EXPECT_EQ(a[i].sample, b[i].sample);
    EXPECT_EQ(a[i].seed, b[i].seed);
    EXPECT_EQ(a[i].task, b[i].task);
    EXPECT_EQ(a[i].level, b[i].level);
    EXPECT_EQ(a[i].category, b[i].category);
    EXPECT_EQ(a[i].status, b[i].status);
    EXPECT_EQ(a[i].outcome, b[i].outcome);
    EXPECT_EQ(a[i].check, b[i].check);
    EXPECT_EQ(a[i].code, b[i].code);
    EXPECT_EQ(a[i].compiled, b[i].compiled);
    EXPECT_EQ(a[i].passed, b[i].passed);
    EXPECT_EQ(a[i].speedup, b[i].speedup);
    EXPECT_EQ(a[i].roofline, b[i].roofline);
    EXPECT_EQ(a[i].turns, b[i].turns);
    EXPECT_EQ(a[i].tool_calls, b[i].tool_calls);
    EXPECT_EQ(a[i].input_tokens, b[i].input_tokens);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
    EXPECT_EQ(a[i].cost_usd, b[i].cost_usd);
    EXPECT_EQ(a[i].error, b[i].error);
    EXPECT_EQ(a[i].kernel, b[i].kernel);
    EXPECT_EQ(timeless(a[i].result), timeless(b[i].result));
    // Every row says why, and keeps its kernels as files.
    EXPECT_EQ(a[i].outcome, kOutcomePassed);
    EXPECT_GT(a[i].roofline, 0);
    ASSERT_FALSE(a[i].best_kernel_path.empty());
    EXPECT_EQ(a[i].best_kernel_path, (dir_ / "full" / "kernels" / "full" / (a[i].task + ".best.py")).string());
    std::ifstream f(a[i].best_kernel_path);
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_EQ(text.str(), a[i].kernel);
    EXPECT_TRUE(fs::exists(b[i].last_kernel_path)) << b[i].last_kernel_path;
  }

  // The merged database is a bench database like any other.
  auto rep = cli("report " + all + " -o " + (dir_ / "all.html").string());
  EXPECT_EQ(rep.exit_code, 0) << rep.out;
  // An output that exists is refused.
  auto again = cli("bench merge " + (dir_ / "s0.sqlite").string() + " -o " + all);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_NE(again.out.find("exists"), std::string::npos) << again.out;
}

// A database holding one run with these fields, and one row.
std::string shard_db(const fs::path& dir, const std::string& name, const std::string& model, const std::string& prompt,
                     const std::string& simulator) {
  const std::string path = (dir / (name + ".sqlite")).string();
  auto store = ResultStore::open(path);
  if (!store) return {};
  json options = {{"prompt_version", prompt}, {"max_turns", 10}, {"shard", name}};
  if (!simulator.empty()) options["simulator_version"] = simulator;
  if (!(*store)->add_run({name, "key-" + name, model, "/tasks", options, "2026-01-01T00:00:00Z"})) return {};
  TaskRow r;
  r.run_id = name;
  r.task_id = "L1_00" + name.substr(name.size() - 1);
  r.status = "passed";
  r.passed = r.compiled = true;
  if (!(*store)->add_result(r)) return {};
  return path;
}

TEST_F(BenchShards, MergeRefusesRunsOfDifferentBenchmarks) {
  const std::string a = shard_db(dir_, "a1", "m", "v1", "1.0");
  struct Case {
    std::string model, prompt, simulator, says;
  };
  const std::vector<Case> cases = {{"other", "v1", "1.0", "model 'm' against 'other'"},
                                   {"m", "v2", "1.0", "prompt_version v1 against v2"},
                                   {"m", "v1", "2.0", "simulator_version 1.0 against 2.0"},
                                   {"m", "v1", "", "simulator_version 1.0 against (not recorded)"}};
  int i = 2;
  for (const auto& c : cases) {
    const std::string b = shard_db(dir_, "b" + std::to_string(i++), c.model, c.prompt, c.simulator);
    ASSERT_FALSE(b.empty());
    const std::string out = (dir_ / "out.sqlite").string();
    auto m = cli("bench merge " + a + " " + b + " -o " + out);
    EXPECT_EQ(m.exit_code, 1) << m.out;
    EXPECT_NE(m.out.find("nkia_bad_argument"), std::string::npos) << m.out;
    EXPECT_NE(m.out.find("different benchmarks: " + c.says), std::string::npos) << m.out;
    EXPECT_FALSE(fs::exists(out));
  }
  // The same benchmark in another shard merges.
  const std::string same = shard_db(dir_, "c9", "m", "v1", "1.0");
  auto ok = cli("--json bench merge " + a + " " + same + " -o " + (dir_ / "ok.sqlite").string() + " --run joined");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  const auto merged = rows("ok");
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].run_id, "joined");
  // A missing input is named.
  auto missing = cli("bench merge " + (dir_ / "nope.sqlite").string() + " -o " + (dir_ / "x.sqlite").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("nope.sqlite"), std::string::npos) << missing.out;
}

TEST_F(BenchShards, AShardOutsideItsRangeIsRefused) {
  for (const char* bad : {"2/2", "1", "3/3", "0/0", "a/b", "1/2x"}) {
    auto r = bench("bad", std::string("--shard ") + bad);
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("not I/N"), std::string::npos) << bad << ": " << r.out;
  }
}

TEST_F(BenchShards, SamplesAreIndependentEpisodesWithDistinctSeedsAndGivePassAtK) {
  auto r =
      testing::run_cli("--json bench --tasks " + (kSource / "tasks" / "nkibench").string() +
                       " --only L1_001 --samples 3 --seed 7 --jobs 2 --workers 2 --run k3 --db " +
                       (dir_ / "k.sqlite").string() + " --out " + (dir_ / "k").string() + " --cache " + shared_cache());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["total"]["tasks"], 3);  // episodes
  const auto rs = rows("k");
  ASSERT_EQ(rs.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(rs[k].task_id, "L1_001");
    EXPECT_EQ(rs[k].sample, k);
    EXPECT_EQ(rs[k].seed, 7u + static_cast<uint64_t>(k));
    EXPECT_EQ(rs[k].best_kernel_path,
              (dir_ / "k" / "kernels" / "k3" / (rs[k].task + ".s" + std::to_string(k) + ".best.py")).string());
  }
  auto x = cli("export " + (dir_ / "k.sqlite").string() + " --format pass-at-k");
  ASSERT_EQ(x.exit_code, 0) << x.out;
  EXPECT_EQ(x.out, "group,k,tasks,pass_at_k\nall,1,1,1\nall,2,1,1\nall,3,1,1\nL1,1,1,1\nL1,2,1,1\nL1,3,1,1\n");
  const fs::path html = dir_ / "k.html";
  auto rep = cli("report " + (dir_ / "k.sqlite").string() + " -o " + html.string());
  ASSERT_EQ(rep.exit_code, 0) << rep.out;
  std::ifstream f(html);
  std::stringstream page;
  page << f.rdbuf();
  EXPECT_NE(page.str().find("<table class=\"summary\" id=\"pass-at-k-0\">"), std::string::npos);
  EXPECT_NE(page.str().find("<th>pass@3</th>"), std::string::npos);
  // --resume with the same settings finds every episode done.
  auto again = testing::run_cli("--json bench --tasks " + (kSource / "tasks" / "nkibench").string() +
                                " --only L1_001 --samples 3 --seed 7 --resume --db " + (dir_ / "k.sqlite").string() +
                                " --out " + (dir_ / "k").string() + " --cache " + shared_cache());
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(json::parse(again.out, nullptr, false)["skipped"], 3) << again.out;
}

// A database of the first schema: results keyed by (run, task), without the columns of why.
TEST_F(BenchShards, AnOldDatabaseIsMigratedAndStaysReadable) {
  const std::string path = (dir_ / "old.sqlite").string();
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, key TEXT NOT NULL, model TEXT NOT NULL, tasks_root TEXT NOT "
        "NULL, options TEXT NOT NULL, created TEXT NOT NULL);"
        "CREATE TABLE results (run_id TEXT NOT NULL REFERENCES runs(run_id), task_id TEXT NOT NULL, task TEXT NOT "
        "NULL, level INTEGER NOT NULL, category TEXT NOT NULL, status TEXT NOT NULL, compiled INTEGER NOT NULL, "
        "passed INTEGER NOT NULL, speedup REAL NOT NULL, turns INTEGER NOT NULL, tool_calls INTEGER NOT NULL, "
        "input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, seconds REAL NOT "
        "NULL, error TEXT NOT NULL, kernel TEXT NOT NULL, trajectory TEXT NOT NULL, result TEXT NOT NULL, finished "
        "TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')), PRIMARY KEY (run_id, task_id));"
        "INSERT INTO runs VALUES ('old', 'k', 'm', '/t', '{}', '2025-01-01T00:00:00Z');"
        "INSERT INTO results(run_id, task_id, task, level, category, status, compiled, passed, speedup, turns, "
        "tool_calls, input_tokens, output_tokens, cost_usd, seconds, error, kernel, trajectory, result) VALUES "
        "('old', 'L1_001', 'L1_001_x', 1, 'c', 'compiled', 1, 0, 0, 3, 4, 10, 20, 0.5, 2, 'e', 'def k(): pass', '', "
        "'{\"model_seconds\": 1.5, \"verify\": {\"check\": \"mismatch\"}}'),"
        "('old', 'L1_002', 'L1_002_y', 1, 'c', 'interrupted', 0, 0, 0, 1, 0, 0, 0, 0, 1, '', '', '', '{}');");
  }
  auto store = ResultStore::open(path);
  ASSERT_TRUE(store) << store.error().format();
  auto rs = (*store)->results("old");
  ASSERT_TRUE(rs);
  ASSERT_EQ(rs->size(), 2u);
  const TaskRow& r = (*rs)[0];
  EXPECT_EQ(r.sample, 0);
  EXPECT_EQ(r.outcome, "");
  EXPECT_EQ(r.turns, 3);
  EXPECT_EQ(r.kernel, "def k(): pass");
  EXPECT_EQ(r.roofline, -1);
  // The report derives what the old row did not store.
  auto report = build_run_report(RunInfo{"old", "k", "m", "/t", json::object(), ""}, *rs, false);
  EXPECT_EQ(report.tasks[0].outcome, Outcome::kFailedCheck);
  EXPECT_EQ(report.tasks[0].check, "mismatch");
  EXPECT_EQ(report.tasks[0].model_seconds, 1.5);
  EXPECT_EQ(report.tasks[1].outcome, Outcome::kInterrupted);
  // New rows go in beside the old ones, keyed by sample.
  TaskRow s1 = r;
  s1.sample = 1;
  s1.outcome = kOutcomeCompileError;
  s1.code = "err_x";
  ASSERT_TRUE((*store)->add_result(s1));
  auto done = (*store)->finished_episodes("old");
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (std::set<std::pair<std::string, int>>{{"L1_001", 0}, {"L1_001", 1}}));
  auto fin = (*store)->finished_tasks("old");
  ASSERT_TRUE(fin);
  EXPECT_EQ(*fin, (std::set<std::string>{"L1_001"}));
  store->reset();
  // Opening it again is no second migration.
  auto reopened = ResultStore::open(path);
  ASSERT_TRUE(reopened);
  auto rs2 = (*reopened)->results("old");
  ASSERT_TRUE(rs2);
  ASSERT_EQ(rs2->size(), 3u);
  EXPECT_EQ((*rs2)[1].code, "err_x");
}

}  // namespace
}  // namespace nki_agent
