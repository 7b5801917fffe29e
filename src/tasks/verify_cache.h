// tasks/verify_cache.h — verifications already done, on disk: a kernel verified again unchanged is
// answered from its stored result instead of being run again.
//
// A result is stored under a key that covers everything it depends on: the candidate's files (every
// path and its text), the task's text (task.py + task.toml, Task::hash) and its baseline's files
// (the speed figure), the options that change what is run or checked (seeds, seed base, shape
// sets, kernel time and memory limits, static policy, fail-fast, the compute bounds, the reference's
// torch threads), the speed model's identity, the installed PyTorch (torch_fingerprint) and the
// simulator itself: nki-agent's version and the size, time and inode of both its executables
// (nki-agent and nki-agent-worker), so any rebuild starts afresh.
//
// Only results that another run would repeat are stored: a verification whose kernel hit a
// wall-clock, CPU or memory limit, crashed its sandbox, or lost its speed figure to a failed timing
// run, is not (the machine's load decides those). Machinery failures (Result errors) never are.
//
// Layout: <dir>/<2 hex>/<64 hex>.json, one file per result, published by a rename, so a reader
// finds a whole file or none. A file that cannot be parsed is a miss. The folder is kept under
// NKIA_RESULT_CACHE_MAX_BYTES (a size such as "64M"), else 256 MiB: a store that takes it over
// the limit evicts the least recently used results (a hit touches its file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/kernel_call.h"
#include "tasks/task.h"
#include "tasks/verify.h"

namespace nki_agent {

inline constexpr int64_t kDefaultResultCacheMaxBytes = int64_t{256} << 20;
inline constexpr const char* kResultCacheMaxBytesEnv = "NKIA_RESULT_CACHE_MAX_BYTES";

// <reference cache folder>/results: the results follow the reference cache they were verified
// against (a --cache folder of its own gets results of its own).
std::string result_cache_dir_for(const std::string& reference_cache_dir);

// The key of verifying `candidate` on `task` with `options`; empty when the verification cannot be
// cached (a speed model without an identity, an executable that cannot be found).
std::string verify_result_key(const Task& task, const KernelFiles& candidate, const VerifyOptions& options);

// Whether another verification of the same key would give the same result (see above).
bool verify_result_repeatable(const VerifyResult& result, const VerifyOptions& options);

// The inverse of VerifyResult::to_json. Fields it lacks keep their defaults; never throws.
VerifyResult verify_result_from_json(const nlohmann::json& j);

class VerifyResultCache {
 public:
  explicit VerifyResultCache(std::string dir);

  // The stored result, with from_result_cache set; nullopt when there is none (or it is damaged).
  std::optional<VerifyResult> get(const std::string& key) const;
  // Stores `result` when it is repeatable, then keeps the folder under its limit. A cache that
  // cannot be written is skipped with a debug log: verification never fails for it.
  void put(const std::string& key, const VerifyResult& result, const VerifyOptions& options) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string path_of(const std::string& key) const;
  std::string dir_;
};

}  // namespace nki_agent
