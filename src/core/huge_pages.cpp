// Transparent huge pages for large buffers (core/huge_pages.h).
#include "core/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace nki_agent {

void advise_huge_pages(void* p, size_t n) {
  if (p == nullptr || n < kHugeBufferMinBytes) return;
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const uintptr_t last = (begin + n) / kHugePageBytes * kHugePageBytes;
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

void reserve_on_huge_pages(std::string& s, size_t need) {
  if (s.capacity() >= need) return;
  std::string bigger;
  bigger.reserve(s.empty() ? need : std::max(need, 2 * s.capacity()));
  advise_huge_pages(bigger.data(), bigger.capacity());
  bigger.append(s);
  s.swap(bigger);
}

}  // namespace nki_agent
