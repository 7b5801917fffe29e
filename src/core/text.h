// core/text.h — small text helpers several modules share: ASCII case folding and replacement.
//
// These work on bytes, ASCII only, whatever the C locale says: the text they see (header names,
// search words, templates) is ASCII where it matters, and UTF-8 bytes above 0x7f pass through
// unchanged. Nothing here allocates more than its result.
#pragma once

#include <string>
#include <string_view>

namespace nki_agent {

// 'A'..'Z' to 'a'..'z'; every other byte as it is.
constexpr char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
std::string to_lower(std::string_view s);

// `s` with every occurrence of `from` replaced by `to`, left to right, never inside a replacement.
// An empty `from` replaces nothing.
std::string replace_all(std::string s, std::string_view from, std::string_view to);

}  // namespace nki_agent
