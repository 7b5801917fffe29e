#include "runtime/received_bytes.h"

#include <algorithm>
#include <cstdlib>

#include "core/huge_pages.h"
#include "core/mapping_pool.h"

namespace nki_agent {
namespace {

// Smaller replies are plain heap memory: a pooled mapping pays off where page faults would.
constexpr int64_t kPooledMinBytes = int64_t{1} << 20;
constexpr size_t kAlign = 64;  // what a tensor's storage in external memory needs

}  // namespace

std::shared_ptr<ReceivedBytes> ReceivedBytes::make(int64_t n) {
  if (n < 0) return nullptr;
  std::shared_ptr<ReceivedBytes> r(new ReceivedBytes());
  if (n >= kPooledMinBytes) {
    // Whole huge pages: replies of about the same size (case after case of one shape set) round
    // to the same mapping, which the pool hands back in place.
    const size_t mapped = huge_page_rounded(static_cast<size_t>(n));
    const PooledMapping m = take_mapping(mapped);
    if (m.data == nullptr) return nullptr;
    r->data_ = static_cast<uint8_t*>(m.data);
    r->mapped_ = mapped;
  } else {
    r->data_ = static_cast<uint8_t*>(
        std::aligned_alloc(kAlign, std::max<size_t>(kAlign, (static_cast<size_t>(n) + kAlign - 1) / kAlign * kAlign)));
    if (r->data_ == nullptr) return nullptr;
  }
  r->size_ = n;
  return r;
}

ReceivedBytes::~ReceivedBytes() {
  if (mapped_ > 0)
    give_mapping(data_, mapped_);
  else
    std::free(data_);
}

void ReceivedBytes::truncate(int64_t n) {
  size_ = std::clamp<int64_t>(n, 0, size_);
}

}  // namespace nki_agent
