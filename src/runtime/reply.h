// runtime/reply.h — the bytes a sandboxed handler answers with, some of them only pointed to.
//
// A kernel's outputs are tens of MB; copying each into the reply, and that reply into fresh memory,
// costs as much as a small kernel's whole run. So a Reply is a sequence of parts: bytes it owns
// (headers, small arrays) and spans of memory it keeps alive and points to (an output tensor's
// storage), which the sandboxed child writes out in order without a copy (runtime/sandbox_child.cpp).
// What the reader receives is the concatenation of the parts: the same bytes as a Reply flattened
// into one string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nki_agent {

class Reply {
 public:
  struct Part {
    std::string owned;  // used when data is null
    const char* data = nullptr;
    size_t size = 0;
    std::shared_ptr<const void> keep;  // keeps `data` valid
    std::string_view bytes() const { return data ? std::string_view(data, size) : std::string_view(owned); }
  };

  Reply() = default;
  Reply(std::string bytes);  // NOLINT(google-explicit-constructor): a handler may answer a string

  // Bytes appended to the reply's last owned part (a new one after a span).
  void append(std::string_view bytes);
  // A span of `n` bytes at `data`, kept valid by `keep`, appended without a copy.
  void append_span(const void* data, size_t n, std::shared_ptr<const void> keep);
  // Writes the 8 little-endian bytes of v over owned bytes at byte offset `at` of the reply (a
  // length written after what it counts); they must lie in one owned part.
  void set_u64(size_t at, uint64_t v);

  size_t size() const { return size_; }
  const std::vector<Part>& parts() const { return parts_; }
  std::string flatten() const;

 private:
  std::string& owned_tail();
  std::vector<Part> parts_;
  size_t size_ = 0;
};

}  // namespace nki_agent
