// The reference cache's size limit: sizes as written by users, what the cache holds, eviction in
// least-recently-used order (a hit makes an entry the newest), sparing recent entries, stale
// scratch, and `nki-agent cache info|prune` end to end on a temporary cache folder.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/python_oracle.h"
#include "tasks/reference_cache.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

void set_age(const fs::path& p, double seconds_ago) {
  const double t =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() - seconds_ago;
  timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(t);
  ts[0].tv_nsec = ts[1].tv_nsec = 0;
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, 0), 0) << p;
}

// An entry as the reference runner publishes it: <2 hex>/<64 hex>/meta.json and one array file
// of `bytes` bytes (meta.json adds 2), last used `age` seconds ago. Returns its folder.
fs::path make_entry(const fs::path& cache, char digit, int64_t bytes, double age) {
  const std::string key(64, digit);
  const fs::path dir = cache / key.substr(0, 2) / key;
  fs::create_directories(dir);
  std::ofstream(dir / "out0.npy", std::ios::binary) << std::string(static_cast<size_t>(bytes), 'x');
  std::ofstream(dir / "meta.json") << "{}";
  set_age(dir / "meta.json", age);
  return dir;
}

TEST(ReferenceCache, SizesAsUsersWriteThem) {
  EXPECT_EQ(*parse_byte_size("12345"), 12345);
  EXPECT_EQ(*parse_byte_size("4G"), int64_t{4} << 30);
  EXPECT_EQ(*parse_byte_size("4GiB"), int64_t{4} << 30);
  EXPECT_EQ(*parse_byte_size("500M"), int64_t{500} << 20);
  EXPECT_EQ(*parse_byte_size("100k"), 102400);
  EXPECT_EQ(*parse_byte_size(" 1.5K "), 1536);
  EXPECT_EQ(*parse_byte_size("2 TB"), int64_t{2} << 40);
  EXPECT_EQ(*parse_byte_size("0"), 0);
  for (const char* bad : {"", "abc", "-1", "4X", "G", "1.2.3", "99999999999T"}) {
    auto r = parse_byte_size(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "nkia_bad_size");
  }
}

TEST(ReferenceCache, StatsCountEntriesOnly) {
  testing::ScratchDir dir;
  const fs::path cache = dir.path();
  EXPECT_EQ(reference_cache_stats((cache / "absent").string())->entries, 0);
  make_entry(cache, 'a', 100, 300);
  make_entry(cache, 'b', 200, 200);
  make_entry(cache, 'c', 300, 100);
  fs::create_directories(cache / "tmp" / "nkia-ref-x");
  std::ofstream(cache / "tmp" / "nkia-ref-x" / "scratch") << "12345";
  fs::create_directories(cache / "zz" / "not-an-entry");  // neither counted nor evicted
  std::ofstream(cache / "README") << "stray";
  auto s = reference_cache_stats(cache.string());
  ASSERT_TRUE(s) << s.error().format();
  EXPECT_EQ(s->entries, 3);
  EXPECT_EQ(s->bytes, 600 + 3 * 2);
  EXPECT_EQ(s->scratch_bytes, 5);
  EXPECT_NEAR(s->newest_use - s->oldest_use, 200, 1);
}

TEST(ReferenceCache, PruneEvictsLeastRecentlyUsedFirst) {
  testing::ScratchDir dir;
  const fs::path cache = dir.path();
  const fs::path a = make_entry(cache, 'a', 1000, 3000);  // oldest
  const fs::path b = make_entry(cache, 'b', 1000, 2000);
  const fs::path c = make_entry(cache, 'c', 1000, 1000);
  const fs::path d = make_entry(cache, 'd', 1000, 10);  // newest
  touch_reference_entry(a.string());                    // a hit: a is now the most recently used
  PruneOptions po;
  po.max_bytes = 2100;  // room for two entries
  auto r = prune_reference_cache(cache.string(), po);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->removed, 2);
  EXPECT_EQ(r->freed_bytes, 2 * 1002);
  EXPECT_EQ(r->left.entries, 2);
  EXPECT_FALSE(fs::exists(b));
  EXPECT_FALSE(fs::exists(c));
  EXPECT_TRUE(fs::exists(a / "out0.npy"));
  EXPECT_TRUE(fs::exists(d / "out0.npy"));
  EXPECT_TRUE(fs::exists(cache / "bb"));  // shard folders stay: a writer may be renaming into one
  // Nothing left in the scratch folder by the eviction itself.
  EXPECT_TRUE(fs::is_empty(cache / "tmp"));

  // Already within the limit: nothing to do.
  auto again = prune_reference_cache(cache.string(), po);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->removed, 0);
  // Everything.
  po.max_bytes = 0;
  auto all = prune_reference_cache(cache.string(), po);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->removed, 2);
  EXPECT_EQ(all->left.entries, 0);
  EXPECT_EQ(all->left.bytes, 0);
}

TEST(ReferenceCache, AutomaticPruningSparesRecentEntriesAndStaleScratchGoes) {
  testing::ScratchDir dir;
  const fs::path cache = dir.path();
  const fs::path old_entry = make_entry(cache, 'a', 1000, 86400);
  const fs::path recent = make_entry(cache, 'b', 1000, 5);
  const fs::path no_meta = make_entry(cache, 'c', 1000, 0);
  fs::remove(no_meta / "meta.json");  // dated by its folder instead
  set_age(no_meta, 7200);
  fs::create_directories(cache / "tmp" / "nkia-ref-dead");
  set_age(cache / "tmp" / "nkia-ref-dead", 3 * 86400);
  fs::create_directories(cache / "tmp" / "nkia-ref-live");
  PruneOptions po;
  po.max_bytes = 0;
  po.spare_used_within_seconds = kRecentUseSeconds;
  auto r = prune_reference_cache(cache.string(), po);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->removed, 2);
  EXPECT_EQ(r->spared, 1);
  EXPECT_FALSE(fs::exists(old_entry));
  EXPECT_FALSE(fs::exists(no_meta));
  EXPECT_TRUE(fs::exists(recent));
  EXPECT_FALSE(fs::exists(cache / "tmp" / "nkia-ref-dead"));
  EXPECT_TRUE(fs::exists(cache / "tmp" / "nkia-ref-live"));
}

using testing::CliRun;

CliRun cli(const std::string& env, const std::string& args) {
  return testing::run_cli(args, testing::Stderr::kMerge, env);
}

nlohmann::json json_of(const CliRun& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not one JSON object: " << r.out;
  return j.is_discarded() ? nlohmann::json::object() : j;
}

TEST(CacheCli, InfoAndPrune) {
  testing::ScratchDir dir;
  const fs::path cache = fs::path(dir.path()) / "refs";
  make_entry(cache, 'a', 4000, 400);
  make_entry(cache, 'b', 4000, 300);
  const fs::path newest = make_entry(cache, 'c', 4000, 200);
  const std::string env = "NKIA_REFERENCE_CACHE=" + cache.string();

  auto info = cli(env, "cache info --json");
  ASSERT_EQ(info.exit_code, 0) << info.out;
  auto j = json_of(info)["cache"];
  EXPECT_EQ(j["dir"], cache.string());
  EXPECT_EQ(j["entries"], 3);
  EXPECT_EQ(j["bytes"], 3 * 4002);
  EXPECT_EQ(j["limit_bytes"], kDefaultReferenceCacheMaxBytes);
  EXPECT_EQ(j["limit_source"], "default");
  auto text = cli(env, "cache info");
  EXPECT_NE(text.out.find(cache.string()), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("4.0 GiB"), std::string::npos) << text.out;

  auto limited = json_of(cli(env + " NKIA_REFERENCE_CACHE_MAX_BYTES=10K", "--json cache info"))["cache"];
  EXPECT_EQ(limited["limit_bytes"], 10240);
  EXPECT_EQ(limited["limit_source"], "NKIA_REFERENCE_CACHE_MAX_BYTES");
  auto bad = cli(env + " NKIA_REFERENCE_CACHE_MAX_BYTES=lots", "--json cache info");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(json_of(bad)["diagnostics"][0]["code"], "nkia_bad_size");

  // Without --max-bytes, down to the limit: 10 KiB holds two of the three.
  auto to_limit = cli(env + " NKIA_REFERENCE_CACHE_MAX_BYTES=10K", "cache prune --json");
  ASSERT_EQ(to_limit.exit_code, 0) << to_limit.out;
  auto p = json_of(to_limit)["prune"];
  EXPECT_EQ(p["removed"], 1);
  EXPECT_EQ(p["left"]["entries"], 2);
  EXPECT_FALSE(fs::exists(cache / "aa" / std::string(64, 'a')));  // the least recently used went

  auto one = json_of(cli(env, "cache prune --max-bytes 5K --json"))["prune"];
  EXPECT_EQ(one["removed"], 1);
  EXPECT_EQ(one["max_bytes"], 5120);
  EXPECT_TRUE(fs::exists(newest));

  EXPECT_EQ(cli(env, "cache prune --max-bytes big").exit_code, 1);
  EXPECT_EQ(cli(env, "cache prune --all --max-bytes 1").exit_code, 2);
  // --cache names the folder instead of the environment.
  auto other =
      json_of(cli("NKIA_REFERENCE_CACHE=/nonexistent", "cache --cache " + cache.string() + " prune --all --json"));
  EXPECT_EQ(other["prune"]["removed"], 1);
  EXPECT_EQ(other["prune"]["left"]["entries"], 0);
  EXPECT_EQ(json_of(cli(env, "cache info --json"))["cache"]["entries"], 0);
}

}  // namespace
}  // namespace nki_agent
