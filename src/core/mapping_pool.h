// core/mapping_pool.h — large anonymous memory mappings, kept for reuse when freed.
//
// Fresh memory is expensive where verification spends it: the kernel zeroes every new page, and on
// a virtual machine it may first fetch the page from the hypervisor (docs/perf.md). A verification
// allocates the same sizes case after case — inputs, outputs, the tensors between — so a mapping
// given back here serves the next request of the same size without a page fault. Mappings of at
// least kHugeBufferMinBytes are advised transparent huge pages (core/huge_pages.h).
//
// At most kMaxIdleMappingBytes stay idle (the oldest are unmapped first, and all of them when the
// system refuses a new mapping). Idle mappings are not inherited by a forked child (MADV_DONTFORK),
// which starts with an empty pool: a kernel process never sees what an earlier request left in them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nki_agent {

struct PooledMapping {
  void* data = nullptr;  // null: the system refused the memory
  bool reused = false;   // false: fresh, reading as zeros; true: holding what it held when given back
};

inline constexpr int64_t kMaxIdleMappingBytes = int64_t{1} << 30;

// A read-write private mapping of exactly `bytes` (a whole number of pages).
PooledMapping take_mapping(size_t bytes);
// Gives back a mapping take_mapping returned, with the size it was taken with.
void give_mapping(void* data, size_t bytes);

}  // namespace nki_agent
