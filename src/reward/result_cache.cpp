// reward/result_cache.cpp — a list in use order and an index into it.
#include "reward/result_cache.h"

namespace nki_agent {

std::optional<KernelScore> RewardResultCache::get(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->second;
}

void RewardResultCache::put(const std::string& key, const KernelScore& value) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) {
    it->second->second = value;
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.emplace_front(key, value);
  index_[key] = order_.begin();
  while (order_.size() > capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
}

size_t RewardResultCache::size() const {
  std::lock_guard lock(mu_);
  return order_.size();
}

int64_t RewardResultCache::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

int64_t RewardResultCache::misses() const {
  std::lock_guard lock(mu_);
  return misses_;
}

}  // namespace nki_agent
