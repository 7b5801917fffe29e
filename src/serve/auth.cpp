// serve/auth.cpp — the token file and a comparison that does not leak timing.
#include "serve/auth.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/crypto.h>

#include <fstream>

namespace nki_agent::serve {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

Result<TokenSet> TokenSet::load(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("cannot read the token file {}", path),
                                            "give --tokens a readable file with one token per line"));
  TokenSet t;
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line.size() < 16)
      return tl::unexpected(Diagnostic::error(
          "nkia_bad_argument", fmt::format("a token in {} is {} bytes; tokens must be at least 16", path, line.size()),
          "make tokens with e.g. `openssl rand -hex 32`"));
    t.tokens_.push_back(line);
  }
  if (t.tokens_.empty())
    return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("the token file {} holds no token", path),
                                            "write one token per line"));
  return t;
}

bool TokenSet::accepts(std::string_view authorization) const {
  // The scheme is case-insensitive (RFC 7235); the token is not.
  constexpr std::string_view kBearer = "bearer ";
  if (authorization.size() <= kBearer.size()) return false;
  for (size_t i = 0; i < kBearer.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kBearer[i]) return false;
  return holds(authorization.substr(kBearer.size()));
}

bool TokenSet::holds(std::string_view given) const {
  bool match = false;
  for (const auto& t : tokens_) {
    // Equal lengths compared in constant time; a length difference says only the length.
    const bool same = t.size() == given.size() && CRYPTO_memcmp(t.data(), given.data(), t.size()) == 0;
    match = match || same;
  }
  return match;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  // An IPv4 literal in 127.0.0.0/8; a name such as 127.example.net may resolve anywhere.
  in_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

}  // namespace nki_agent::serve
