// Large anonymous mappings kept for reuse (core/mapping_pool.h).
#include "core/mapping_pool.h"

#include <pthread.h>
#include <sys/mman.h>

#include <iterator>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "core/huge_pages.h"

namespace nki_agent {
namespace {

class MappingPool {
 public:
  MappingPool() {
    ::pthread_atfork(nullptr, nullptr, [] { pool().forget_after_fork(); });
  }

  static MappingPool& pool() {
    static auto* p = new MappingPool();  // never destroyed: storages may outlive static destruction
    return *p;
  }

  void* take(size_t bytes) {
    std::lock_guard lock(mu_);
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {  // the newest first: still in the caches
      if (it->second != bytes) continue;
      void* p = it->first;
      idle_.erase(std::next(it).base());
      idle_bytes_ -= bytes;
      if (::madvise(p, bytes, MADV_DOFORK) == 0) return p;
      ::munmap(p, bytes);  // a mapping in use must reach a forked child: take fresh memory instead
      return nullptr;
    }
    return nullptr;
  }

  void give(void* p, size_t bytes) {
    std::lock_guard lock(mu_);
    if (static_cast<int64_t>(bytes) > kMaxIdleMappingBytes || ::madvise(p, bytes, MADV_DONTFORK) != 0) {
      ::munmap(p, bytes);
      return;
    }
    idle_.emplace_back(p, bytes);
    idle_bytes_ += static_cast<int64_t>(bytes);
    while (idle_bytes_ > kMaxIdleMappingBytes) {
      ::munmap(idle_.front().first, idle_.front().second);
      idle_bytes_ -= static_cast<int64_t>(idle_.front().second);
      idle_.erase(idle_.begin());
    }
  }

  // Unmaps every idle mapping (when the system refuses memory, idle mappings may be the reason).
  void drop_idle() {
    std::lock_guard lock(mu_);
    for (const auto& [p, bytes] : idle_) ::munmap(p, bytes);
    idle_.clear();
    idle_bytes_ = 0;
  }

  // In a forked child: the idle mappings were not inherited (MADV_DONTFORK), and another thread of
  // the parent may have held the lock.
  void forget_after_fork() {
    new (&mu_) std::mutex();
    idle_.clear();
    idle_bytes_ = 0;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<void*, size_t>> idle_;  // the oldest first
  int64_t idle_bytes_ = 0;
};

}  // namespace

PooledMapping take_mapping(size_t bytes) {
  if (void* p = MappingPool::pool().take(bytes)) return {p, true};
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {  // under an address-space limit the idle mappings count: give them up first
    MappingPool::pool().drop_idle();
    p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return {};
  }
  advise_huge_pages(p, bytes);
  return {p, false};
}

void give_mapping(void* data, size_t bytes) {
  if (data != nullptr) MappingPool::pool().give(data, bytes);
}

}  // namespace nki_agent
