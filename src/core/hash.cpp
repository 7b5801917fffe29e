#include "core/hash.h"

#include <openssl/evp.h>

#include "core/diagnostic.h"

namespace nki_agent {

struct Hasher::Impl {
  EVP_MD_CTX* ctx = nullptr;
  bool done = false;
};

Hasher::Hasher() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  NKIA_ASSERT(impl_->ctx != nullptr);
  NKIA_ASSERT(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
}

Hasher::~Hasher() {
  EVP_MD_CTX_free(impl_->ctx);
}

Hasher& Hasher::bytes(const void* data, size_t n) {
  NKIA_ASSERT(!impl_->done);
  if (n > 0) NKIA_ASSERT(EVP_DigestUpdate(impl_->ctx, data, n) == 1);
  return *this;
}

Hasher& Hasher::bytes(std::span<const uint8_t> data) {
  return bytes(data.data(), data.size());
}

Hasher& Hasher::field(std::string_view s) {
  uint8_t len[8];
  uint64_t n = s.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
  bytes(len, 8);
  return bytes(s.data(), s.size());
}

Hasher& Hasher::field(int64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  return field(std::string_view(reinterpret_cast<const char*>(b), 8));
}

Digest Hasher::finish() {
  NKIA_ASSERT(!impl_->done);
  Digest d{};
  unsigned int n = 0;
  NKIA_ASSERT(EVP_DigestFinal_ex(impl_->ctx, d.data(), &n) == 1 && n == d.size());
  impl_->done = true;
  return d;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

Digest sha256(std::string_view data) {
  return Hasher().bytes(data.data(), data.size()).finish();
}

std::string sha256_hex(std::string_view data) {
  return to_hex(sha256(data));
}

}  // namespace nki_agent
