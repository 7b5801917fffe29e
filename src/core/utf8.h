// core/utf8.h — is a byte string UTF-8 text, and where it stops being so.
//
// Everything nki-agent sends between processes or prints as JSON must be UTF-8: kernel sources,
// names, messages. Bytes a user gave us that are not are a user error, reported at the first bad
// byte (file:line:col); they never reach a JSON encoder, which would refuse them.
//
// "Well-formed" is RFC 3629's: no overlong forms, no surrogates (U+D800..U+DFFF), nothing past
// U+10FFFF — exactly what JSON libraries and Python's UTF-8 codec accept.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace nki_agent {

// The byte offset of the first byte of `s` that does not start or continue a well-formed UTF-8
// sequence (a truncated sequence counts from its lead byte), or std::string_view::npos.
size_t invalid_utf8_offset(std::string_view s);
inline bool is_utf8(std::string_view s) {
  return invalid_utf8_offset(s) == std::string_view::npos;
}

// Where byte `offset` of `text` lies in `file`: the 1-based line, and the 1-based column counted
// in characters of the well-formed text before it on that line.
SourceLoc text_location(std::string_view text, size_t offset, std::string file);

// `s` with every byte that is not part of well-formed UTF-8 written as \xNN: printable anywhere.
std::string escape_invalid_utf8(std::string_view s);

// Appends the code point `cp` (at most U+10FFFF, not a surrogate) to `out` as UTF-8.
void append_utf8(std::string& out, char32_t cp);

}  // namespace nki_agent
