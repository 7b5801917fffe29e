// tasks/input_cache.h — generated kernel inputs kept for the next verification of the same task.
//
// An RL step or a benchmark verifies many kernels of one task, and every verification draws the
// same inputs for the same case: drawing a 25 M-element tensor costs about a second. The cache
// keeps large inputs by everything generate_input() reads (the argument's name, dtype, dist and
// range, the shape, seed, profile, shape set, large scale and the generator's version), as
// sealed shared memory: they cross into kernel workers without a copy (runtime/shared_memory.h)
// and nobody — a kernel included — can change them. At most max_bytes are kept, least recently
// used evicted first; inputs under kMinCachedInputBytes are drawn each time (cheap).
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "tasks/inputs.h"
#include "tasks/task.h"
#include "tensor/tensor.h"

namespace nki_agent {

inline constexpr int64_t kMinCachedInputBytes = 1 << 20;
// The process's cache: $NKIA_INPUT_CACHE_BYTES ("1G", "500M", a byte count; 0 turns it off),
// else this.
inline constexpr int64_t kDefaultInputCacheBytes = int64_t{1} << 30;

struct InputCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;  // drawn and kept
  int64_t bytes = 0;   // held now
  int64_t entries = 0;
};

class InputCache {
 public:
  explicit InputCache(int64_t max_bytes) : max_bytes_(max_bytes) {}
  // The one every verification of this process shares.
  static InputCache& process();

  // generate_input()'s tensor, from the cache when it was drawn before. Thread-safe.
  Tensor input(const TaskArg& arg, const Shape& shape, uint64_t seed, InputProfile profile, std::string_view set_name,
               double large_scale);
  InputCacheStats stats() const;

 private:
  struct Entry {
    Tensor tensor;
    std::list<std::string>::iterator lru;
  };
  const int64_t max_bytes_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // most recently used first
  InputCacheStats stats_;
};

}  // namespace nki_agent
