#include "tasks/input_cache.h"

#include <fmt/format.h>
#include <cstdlib>

#include "core/log.h"
#include "runtime/kernel_call.h"
#include "runtime/shared_memory.h"
#include "tasks/reference_cache.h"

namespace nki_agent {
namespace {

std::string key_of(const TaskArg& a, const Shape& shape, uint64_t seed, InputProfile profile, std::string_view set,
                   double large_scale) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", kInputGeneratorVersion, a.name, dtype_name(a.dtype),
                     static_cast<int>(a.dist), a.low ? fmt::format("{:a}", *a.low) : "-",
                     a.high ? fmt::format("{:a}", *a.high) : "-", shape_str(shape), seed, profile_name(profile), set,
                     fmt::format("{:a}", large_scale), a.torch_dtype);
}

int64_t process_limit() {
  const char* env = std::getenv("NKIA_INPUT_CACHE_BYTES");
  if (env == nullptr || *env == '\0') return kDefaultInputCacheBytes;
  auto n = parse_byte_size(env);
  if (!n) {
    NKIA_LOG_WARN("NKIA_INPUT_CACHE_BYTES: {}; using {} bytes", n.error().message, kDefaultInputCacheBytes);
    return kDefaultInputCacheBytes;
  }
  return *n;
}

}  // namespace

InputCache& InputCache::process() {
  static InputCache cache(process_limit());
  return cache;
}

Tensor InputCache::input(const TaskArg& arg, const Shape& shape, uint64_t seed, InputProfile profile,
                         std::string_view set_name, double large_scale) {
  const int64_t nbytes = shape_numel(shape) * dtype_size(arg.dtype);
  if (max_bytes_ <= 0 || nbytes < kMinCachedInputBytes || nbytes > max_bytes_)
    return generate_input(arg, shape, seed, profile, set_name, large_scale);
  const std::string key = key_of(arg, shape, seed, profile, set_name, large_scale);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      ++stats_.hits;
      return it->second.tensor;
    }
  }
  // Drawn outside the lock: two verifications missing the same input at once both draw it (the
  // same bits), and the second keeps the first's.
  KernelCall holder;
  holder.inputs = {generate_input(arg, shape, seed, profile, set_name, large_scale)};
  if (auto shared = share_large_inputs(holder, kMinCachedInputBytes); !shared) {
    NKIA_LOG_DEBUG("input cache: {} (the input is used unshared)", shared.error().message);
    return holder.inputs[0];
  }
  // Every verification of this task sends it again: a worker may keep its copy.
  if (auto* m = dynamic_cast<SharedMemory*>(holder.inputs[0].storage()->external().get())) m->mark_reused();
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second.tensor;
  ++stats_.misses;
  while (!lru_.empty() && stats_.bytes + nbytes > max_bytes_) {
    auto victim = entries_.find(lru_.back());
    stats_.bytes -= victim->second.tensor.nbytes();
    entries_.erase(victim);
    lru_.pop_back();
  }
  lru_.push_front(key);
  entries_.emplace(key, Entry{holder.inputs[0], lru_.begin()});
  stats_.bytes += nbytes;
  stats_.entries = static_cast<int64_t>(entries_.size());
  return holder.inputs[0];
}

InputCacheStats InputCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  InputCacheStats s = stats_;
  s.entries = static_cast<int64_t>(entries_.size());
  return s;
}

}  // namespace nki_agent
