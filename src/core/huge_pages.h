// core/huge_pages.h — asks the kernel to back a large buffer with transparent huge pages.
//
// A fresh buffer costs a page fault per 4 KiB page the first time it is written; on a virtual
// machine a fault costs microseconds, so a 50 MB tensor or message spends a large part of its life
// faulting (docs/perf.md, "Verification at RL speed"). With the system's transparent huge pages in
// their default "madvise" mode, the aligned 2 MiB blocks of an advised buffer fault once each.
// Buffers under 4 MiB are left alone, and the advice is only advice: where the system offers no
// huge pages nothing changes.
#pragma once

#include <cstddef>
#include <string>

namespace nki_agent {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kHugeBufferMinBytes = size_t{4} << 20;

// `n` rounded up to whole huge pages: a mapping of that size lies on a 2 MiB boundary and every block
// of it can be a huge page.
constexpr size_t huge_page_rounded(size_t n) {
  return (n + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

// Advises huge pages for the whole 2 MiB blocks within [p, p + n) when n is at least
// kHugeBufferMinBytes; a no-op otherwise.
void advise_huge_pages(void* p, size_t n);

// Room in `s` for `need` bytes in all: new memory is advised huge pages before what `s` holds is
// copied into it; a string that holds something grows at least twofold.
void reserve_on_huge_pages(std::string& s, size_t need);

}  // namespace nki_agent
