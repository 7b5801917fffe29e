// core/hash.h — content hashes for cache keys (reference outputs, compiled tasks, results).
//
// SHA-256 (OpenSSL), so keys are stable across machines, builds and versions, and collisions are
// not a practical concern. Multi-part keys are length-prefixed, so ("ab","c") and ("a","bc")
// differ. Never use std::hash for anything that is stored.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace nki_agent {

using Digest = std::array<uint8_t, 32>;

class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  Hasher& bytes(std::span<const uint8_t> data);  // raw, no length prefix
  Hasher& bytes(const void* data, size_t n);
  // A field of a multi-part key: its length (8 bytes, little-endian), then its bytes.
  Hasher& field(std::string_view s);
  Hasher& field(int64_t v);
  Digest finish();  // the hasher cannot be used afterwards

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string to_hex(std::span<const uint8_t> bytes);
Digest sha256(std::string_view data);
std::string sha256_hex(std::string_view data);

}  // namespace nki_agent
