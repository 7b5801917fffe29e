// serve/auth.h — bearer tokens for the reward service.
//
// Tokens come from a file, one per line (blank lines and # comments skipped). A request's
// `Authorization: Bearer <token>` is compared against every token in constant time (the time
// depends on neither where a guess differs nor which token matched), so tokens cannot be guessed
// byte by byte from response times. Trainers that send no headers (OpenRLHF's and slime's remote
// rewards) put the token in the URL instead: `?token=...`. A server bound to anything but loopback
// must have tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent::serve {

class TokenSet {
 public:
  // Codes: nkia_bad_argument (unreadable file, no token in it, a token shorter than 16 bytes).
  static Result<TokenSet> load(const std::string& path);
  static TokenSet none() { return TokenSet(); }

  bool required() const { return !tokens_.empty(); }
  // Whether the Authorization header's value carries one of the tokens.
  bool accepts(std::string_view authorization) const;
  // Whether `token` itself is one of them (a `?token=` query parameter).
  bool holds(std::string_view token) const;

 private:
  std::vector<std::string> tokens_;
};

// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

}  // namespace nki_agent::serve
