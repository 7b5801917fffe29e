// reward/result_cache.h — scored kernels by key, least recently used dropped first.
//
// An RL batch repeats itself: GRPO groups hold identical completions, a multi-turn trajectory
// resends an unchanged kernel, a trainer retries a request it timed out on. What a kernel scored
// depends only on its source, the task's files, the request's options and the simulator version
// (the key, reward/score.cpp), so a repeat is answered from memory. Thread-safe.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "reward/score_types.h"

namespace nki_agent {

class RewardResultCache {
 public:
  explicit RewardResultCache(size_t capacity) : capacity_(capacity) {}

  std::optional<KernelScore> get(const std::string& key);
  void put(const std::string& key, const KernelScore& value);

  size_t size() const;
  int64_t hits() const;
  int64_t misses() const;

 private:
  using Entry = std::pair<std::string, KernelScore>;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace nki_agent
