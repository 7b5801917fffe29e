// tasks/reference_cache.h — the reference cache's size: what it holds, and evicting the entries
// used least recently until it fits its limit.
//
// Layout (tasks/reference.h): <dir>/<2 hex>/<64 hex>/ is one entry (meta.json and .npy files);
// <dir>/tmp/ holds the scratch folders of running verifications. An entry's last use is the
// modification time of its meta.json: creating an entry sets it and every cache hit touches it.
//
// The limit is NKIA_REFERENCE_CACHE_MAX_BYTES (a size such as "4G" or "500M"), else 4 GiB. A
// reference runner that stored entries prunes the cache to the limit when it ends, sparing entries
// used in the last kRecentUseSeconds (a verification in another process may be reading them), so
// the limit is soft by at most what is in use. `nki-agent cache prune` prunes on demand.
//
// Eviction is safe beside writers and readers in other processes: entries are only ever published
// whole by a rename (reference.cpp) and removed whole by a rename out of place (into tmp/, then
// deleted), so a reader finds a whole entry or none; one evicted under it is recomputed, as a
// damaged one is. Files that vanish while the cache is measured or pruned are simply not counted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace nki_agent {

inline constexpr int64_t kDefaultReferenceCacheMaxBytes = int64_t{4} << 30;
inline constexpr const char* kReferenceCacheMaxBytesEnv = "NKIA_REFERENCE_CACHE_MAX_BYTES";
// Entries used this recently are spared by the automatic pruning.
inline constexpr double kRecentUseSeconds = 600;
// Scratch folders under tmp/ untouched this long were left by a process that died.
inline constexpr double kStaleScratchSeconds = 2 * 24 * 3600;

// "4G", "512M", "100K", "4GiB", "12345": a byte count; K, M, G and T are powers of 1024.
// Code nkia_bad_size.
Result<int64_t> parse_byte_size(std::string_view text);

struct CacheLimit {
  int64_t bytes = kDefaultReferenceCacheMaxBytes;
  std::string source = "default";  // or the environment variable's name
};
// The limit in force. Code nkia_bad_size when NKIA_REFERENCE_CACHE_MAX_BYTES is set but not a size.
Result<CacheLimit> reference_cache_limit();
// The same for any cache: the size `env` names, else `default_bytes`. Code nkia_bad_size when the
// variable is set but not a size.
Result<CacheLimit> cache_limit(const char* env, int64_t default_bytes);

struct CacheStats {
  std::string dir;
  int64_t entries = 0;
  int64_t bytes = 0;          // of the entries
  int64_t scratch_bytes = 0;  // under tmp/
  double oldest_use = 0;      // Unix seconds of the least recently used entry; 0 with no entries
  double newest_use = 0;
  nlohmann::json to_json() const;
};
// What `dir` holds; a folder that does not exist holds nothing. Code nkia_reference_cache when it
// exists but cannot be listed.
Result<CacheStats> reference_cache_stats(const std::string& dir);

struct PruneOptions {
  int64_t max_bytes = kDefaultReferenceCacheMaxBytes;  // evict until the entries take at most this
  double spare_used_within_seconds = 0;                // 0: spare nothing
};

struct PruneResult {
  int64_t removed = 0;      // entries evicted
  int64_t freed_bytes = 0;  // their bytes, and stale scratch's
  int64_t spared = 0;       // entries over the limit kept because they were used recently
  int64_t failed = 0;       // entries that could not be removed (permissions)
  CacheStats left;          // the cache afterwards
  nlohmann::json to_json() const;
};
// Evicts least recently used entries first (ties by key) until the entries fit `max_bytes`, and
// removes stale scratch folders. Code nkia_reference_cache when the folder cannot be listed.
Result<PruneResult> prune_reference_cache(const std::string& dir, const PruneOptions& options);

// Marks a cache entry as used now. A cache that cannot be written still serves: failures are ignored.
void touch_reference_entry(const std::string& entry_dir);

// The pruning a runner does when it ends: to reference_cache_limit() (the default, with a logged
// warning, when the variable is malformed), sparing recent entries. Never fails.
void enforce_reference_cache_limit(const std::string& dir);

}  // namespace nki_agent
