// The reference cache's size and its LRU eviction (tasks/reference_cache.h).
#include "tasks/reference_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/log.h"
#include "core/utf8.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

constexpr const char* kScratch = "tmp";
constexpr const char* kMeta = "meta.json";

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The modification time in Unix seconds, or -1 when the path is gone.
double mtime_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9;
}

// The bytes of the regular files under `p`; files that vanish meanwhile count nothing.
int64_t bytes_under(const fs::path& p) {
  int64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    const auto size = it->file_size(fec);
    if (!fec) total += static_cast<int64_t>(size);
  }
  return total;
}

struct Entry {
  fs::path path;
  std::string key;
  double last_use = 0;
  int64_t bytes = 0;
};

Diagnostic unlistable(const std::string& dir, const std::error_code& ec) {
  return Diagnostic::error(
      "nkia_reference_cache",
      fmt::format("cannot list the reference cache {}: {}", escape_invalid_utf8(dir), ec.message()),
      "check the folder's permissions, or point NKIA_REFERENCE_CACHE (or --cache) elsewhere");
}

// Every entry under `dir`: <2 hex>/<64 hex>/ folders. A missing `dir` has none.
Result<std::vector<Entry>> list_entries(const fs::path& dir) {
  std::vector<Entry> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  fs::directory_iterator shards(dir, ec);
  if (ec) return fail(unlistable(dir.string(), ec));
  for (; !ec && shards != fs::directory_iterator(); shards.increment(ec)) {
    const std::string shard = shards->path().filename().string();
    std::error_code sec;
    if (shard.size() != 2 || !is_hex(shard) || !shards->is_directory(sec)) continue;
    for (fs::directory_iterator it(shards->path(), sec); !sec && it != fs::directory_iterator(); it.increment(sec)) {
      const std::string key = it->path().filename().string();
      std::error_code eec;
      if (key.size() != 64 || !is_hex(key) || !key.starts_with(shard) || !it->is_directory(eec)) continue;
      Entry e{it->path(), key, mtime_of(it->path() / kMeta), 0};
      if (e.last_use < 0) e.last_use = mtime_of(it->path());  // no meta.json: the folder's own time
      if (e.last_use < 0) continue;                           // gone meanwhile
      e.bytes = bytes_under(e.path);
      out.push_back(std::move(e));
    }
  }
  if (ec) return fail(unlistable(dir.string(), ec));
  return out;
}

// Removes `p` by renaming it under tmp/ first (so no reader sees it half deleted). Returns false
// when it could not be removed; an entry already gone counts as removed.
bool evict(const fs::path& cache, const fs::path& p, const std::string& name) {
  static std::atomic<int64_t> seq{0};
  std::error_code ec;
  fs::path trash = cache / kScratch / fmt::format("evict-{}-{}-{}", ::getpid(), seq++, name);
  fs::create_directories(trash.parent_path(), ec);
  ec.clear();
  fs::rename(p, trash, ec);
  if (ec) {
    if (!fs::exists(p, ec)) return true;  // evicted by someone else
    trash = p;                            // cannot be moved: delete in place
  }
  fs::remove_all(trash, ec);
  return !ec || !fs::exists(trash, ec);
}

// Scratch folders under tmp/ that no live process uses: eviction leftovers, and runners' folders
// untouched for kStaleScratchSeconds. Returns the bytes removed.
int64_t remove_stale_scratch(const fs::path& cache, double now) {
  int64_t freed = 0;
  std::error_code ec;
  const fs::path tmp = cache / kScratch;
  if (!fs::is_directory(tmp, ec)) return 0;
  for (fs::directory_iterator it(tmp, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const double t = mtime_of(it->path());
    if (t < 0) continue;
    const bool leftover = name.starts_with("evict-") && !name.starts_with(fmt::format("evict-{}-", ::getpid()));
    if (!leftover && now - t < kStaleScratchSeconds) continue;
    const int64_t bytes = bytes_under(it->path());
    std::error_code rec;
    fs::remove_all(it->path(), rec);
    if (!rec) freed += bytes;
  }
  return freed;
}

}  // namespace

Result<int64_t> parse_byte_size(std::string_view text) {
  auto bad = [&] {
    return fail("nkia_bad_size", fmt::format("'{}' is not a size", escape_invalid_utf8(text)),
                "write a byte count, optionally with K, M, G or T (powers of 1024), e.g. 4G or 500M");
  };
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0) return bad();
  const std::string number(text.substr(0, digits));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return bad();
  std::string unit;
  for (char c : text.substr(digits))
    if (c != ' ') unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB"))
    unit.resize(unit.size() - 2);
  else if (unit.size() > 1 && unit.ends_with("B"))
    unit.pop_back();
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return bad();
  const double bytes = std::floor(value * scale);
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 9.0e18) return bad();
  return static_cast<int64_t>(bytes);
}

Result<CacheLimit> cache_limit(const char* env, int64_t default_bytes) {
  CacheLimit limit;
  limit.bytes = default_bytes;
  const char* value = std::getenv(env);
  if (!value || !*value) return limit;
  auto bytes = parse_byte_size(value);
  if (!bytes) {
    Diagnostic d = bytes.error();
    d.message = fmt::format("{}: {}", env, d.message);
    return fail(std::move(d));
  }
  limit.bytes = *bytes;
  limit.source = env;
  return limit;
}

Result<CacheLimit> reference_cache_limit() {
  return cache_limit(kReferenceCacheMaxBytesEnv, kDefaultReferenceCacheMaxBytes);
}

nlohmann::json CacheStats::to_json() const {
  return {{"dir", dir},
          {"entries", entries},
          {"bytes", bytes},
          {"scratch_bytes", scratch_bytes},
          {"oldest_use", oldest_use},
          {"newest_use", newest_use}};
}

Result<CacheStats> reference_cache_stats(const std::string& dir) {
  auto entries = list_entries(dir);
  if (!entries) return fail(entries.error());
  CacheStats s;
  s.dir = dir;
  for (const Entry& e : *entries) {
    ++s.entries;
    s.bytes += e.bytes;
    s.oldest_use = s.entries == 1 ? e.last_use : std::min(s.oldest_use, e.last_use);
    s.newest_use = std::max(s.newest_use, e.last_use);
  }
  std::error_code ec;
  if (fs::is_directory(fs::path(dir) / kScratch, ec)) s.scratch_bytes = bytes_under(fs::path(dir) / kScratch);
  return s;
}

nlohmann::json PruneResult::to_json() const {
  return {{"removed", removed},
          {"freed_bytes", freed_bytes},
          {"spared", spared},
          {"failed", failed},
          {"left", left.to_json()}};
}

Result<PruneResult> prune_reference_cache(const std::string& dir, const PruneOptions& options) {
  auto entries = list_entries(dir);
  if (!entries) return fail(entries.error());
  PruneResult r;
  const double now = now_seconds();
  int64_t total = 0;
  for (const Entry& e : *entries) total += e.bytes;
  std::sort(entries->begin(), entries->end(), [](const Entry& a, const Entry& b) {
    return a.last_use != b.last_use ? a.last_use < b.last_use : a.key < b.key;
  });
  for (const Entry& e : *entries) {
    if (total <= options.max_bytes) break;
    if (options.spare_used_within_seconds > 0 && now - e.last_use < options.spare_used_within_seconds) {
      ++r.spared;  // and every later one is newer still
      continue;
    }
    if (evict(dir, e.path, e.key)) {
      ++r.removed;
      r.freed_bytes += e.bytes;
      total -= e.bytes;
    } else {
      ++r.failed;
    }
  }
  r.freed_bytes += remove_stale_scratch(dir, now);
  auto left = reference_cache_stats(dir);
  if (!left) return fail(left.error());
  r.left = std::move(*left);
  return r;
}

void touch_reference_entry(const std::string& entry_dir) {
  ::utimensat(AT_FDCWD, (fs::path(entry_dir) / kMeta).c_str(), nullptr, 0);
}

void enforce_reference_cache_limit(const std::string& dir) {
  PruneOptions po;
  po.spare_used_within_seconds = kRecentUseSeconds;
  if (auto limit = reference_cache_limit()) {
    po.max_bytes = limit->bytes;
  } else {
    NKIA_LOG_WARN("{}; keeping the reference cache within the default {} bytes", limit.error().message,
                  kDefaultReferenceCacheMaxBytes);
  }
  auto r = prune_reference_cache(dir, po);
  if (!r) {
    NKIA_LOG_WARN("the reference cache was not pruned: {}", r.error().message);
    return;
  }
  if (r->removed > 0)
    NKIA_LOG_INFO("reference cache {}: evicted {} entries ({} bytes) to stay within its limit", dir, r->removed,
                  r->freed_bytes);
}

}  // namespace nki_agent
