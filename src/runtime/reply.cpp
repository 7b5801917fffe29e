#include "runtime/reply.h"

#include "core/diagnostic.h"
#include "core/huge_pages.h"

namespace nki_agent {

Reply::Reply(std::string bytes) {
  size_ = bytes.size();
  Part p;
  p.owned = std::move(bytes);
  parts_.push_back(std::move(p));
}

std::string& Reply::owned_tail() {
  if (parts_.empty() || parts_.back().data != nullptr) parts_.emplace_back();
  return parts_.back().owned;
}

void Reply::append(std::string_view bytes) {
  owned_tail().append(bytes);
  size_ += bytes.size();
}

void Reply::append_span(const void* data, size_t n, std::shared_ptr<const void> keep) {
  if (n == 0) return;
  Part p;
  p.data = static_cast<const char*>(data);
  p.size = n;
  p.keep = std::move(keep);
  parts_.push_back(std::move(p));
  size_ += n;
}

void Reply::set_u64(size_t at, uint64_t v) {
  size_t start = 0;
  for (Part& p : parts_) {
    const size_t n = p.bytes().size();
    if (at < start + n) {
      NKIA_ASSERT(p.data == nullptr && at + 8 <= start + n);
      for (size_t i = 0; i < 8; ++i) p.owned[at - start + i] = static_cast<char>((v >> (8 * i)) & 0xff);
      return;
    }
    start += n;
  }
  NKIA_ASSERT(false);
}

std::string Reply::flatten() const {
  std::string out;
  reserve_on_huge_pages(out, size_);
  for (const Part& p : parts_) out.append(p.bytes());
  return out;
}

}  // namespace nki_agent
