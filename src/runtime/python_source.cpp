#include "runtime/python_source.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <optional>

#include "core/utf8.h"

namespace nki_agent {

namespace {

enum class Encoding { kUtf8, kLatin1, kCp1252, kAscii };

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// cp1252's characters for 0x80..0x9F (0: none, as in Python's codec); the other bytes are Latin-1's.
constexpr std::array<char32_t, 32> kCp1252High = {0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                                  0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
                                                  0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                                  0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

struct Declaration {
  std::string name;  // as written
  int line = 0;      // 1 or 2
  int col = 0;       // of the name
};

bool comment_or_blank(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\f\r");
  return i == std::string_view::npos || line[i] == '#';
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// PEP 263's `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)` on one line.
std::optional<std::pair<std::string, size_t>> declared_in(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\f");
  if (i == std::string_view::npos || line[i] != '#') return std::nullopt;
  for (size_t at = line.find("coding", i); at != std::string_view::npos; at = line.find("coding", at + 1)) {
    size_t p = at + 6;
    if (p >= line.size() || (line[p] != ':' && line[p] != '=')) continue;
    ++p;
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
    size_t end = p;
    while (end < line.size() && name_char(line[end])) ++end;
    if (end > p) return std::make_pair(std::string(line.substr(p, end - p)), p);
  }
  return std::nullopt;
}

std::optional<Declaration> find_declaration(std::string_view text) {
  size_t nl = text.find('\n');
  std::string_view first = text.substr(0, nl);
  if (auto d = declared_in(first)) return Declaration{d->first, 1, static_cast<int>(d->second) + 1};
  if (nl == std::string_view::npos || !comment_or_blank(first)) return std::nullopt;
  std::string_view rest = text.substr(nl + 1);
  if (auto d = declared_in(rest.substr(0, rest.find('\n'))))
    return Declaration{d->first, 2, static_cast<int>(d->second) + 1};
  return std::nullopt;
}

// The names Python's codec registry gives these encodings, compared without case or separators.
std::optional<Encoding> encoding_named(std::string_view name) {
  std::string key;
  for (char c : name)
    if (c != '-' && c != '_' && c != '.' && c != ' ')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view n : {"utf8", "u8", "utf", "cp65001", "utf8sig"})
    if (key == n) return Encoding::kUtf8;
  for (std::string_view n : {"latin", "latin1", "l1", "iso88591", "iso8859", "8859", "isolatin1", "cp819", "ibm819",
                             "isoir100", "csisolatin1"})
    if (key == n) return Encoding::kLatin1;
  for (std::string_view n : {"cp1252", "windows1252"})
    if (key == n) return Encoding::kCp1252;
  for (std::string_view n : {"ascii", "usascii", "646", "us"})
    if (key == n) return Encoding::kAscii;
  return std::nullopt;
}

// Where byte `offset` is in a single-byte encoding: every byte is one column.
SourceLoc byte_location(std::string_view text, size_t offset, const std::string& file) {
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  return SourceLoc{file, line, static_cast<int>(offset - start) + 1};
}

constexpr const char* kSaveAsUtf8 = "save the file as UTF-8";

}  // namespace

Result<std::string> python_source_text(std::string_view bytes, const std::string& file) {
  const bool bom = bytes.starts_with(kBom);
  std::string_view text = bom ? bytes.substr(kBom.size()) : bytes;
  const std::optional<Declaration> decl = find_declaration(text);
  Encoding enc = Encoding::kUtf8;
  if (decl) {
    auto e = encoding_named(decl->name);
    if (!e)
      return fail(Diagnostic::error("nkia_source_encoding",
                                    fmt::format("the file declares the encoding '{}', which nki-agent does not read",
                                                escape_invalid_utf8(decl->name)),
                                    "save the file as UTF-8; latin-1, cp1252 and ascii declarations are read too")
                      .at(SourceLoc{file, decl->line, decl->col}));
    enc = *e;
    if (bom && enc != Encoding::kUtf8)
      return fail(Diagnostic::error("nkia_source_encoding",
                                    fmt::format("the file starts with a UTF-8 byte-order mark but declares the "
                                                "encoding '{}'",
                                                decl->name),
                                    "remove the declaration, or the byte-order mark")
                      .at(SourceLoc{file, decl->line, decl->col}));
  }
  if (enc == Encoding::kUtf8) {
    const size_t bad = invalid_utf8_offset(text);
    if (bad == std::string_view::npos) return std::string(text);
    const auto byte = static_cast<unsigned char>(text[bad]);
    std::string message =
        decl ? fmt::format("byte 0x{:02x} is not UTF-8, the encoding the file declares", byte)
             : fmt::format("byte 0x{:02x} is not UTF-8, and the file declares no other encoding", byte);
    std::string hint = decl ? std::string(kSaveAsUtf8)
                            : "save the file as UTF-8, or declare its encoding on its first or second line, e.g. "
                              "'# -*- coding: latin-1 -*-' (PEP 263)";
    return fail(
        Diagnostic::error("nkia_not_utf8", std::move(message), std::move(hint)).at(text_location(text, bad, file)));
  }
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    char32_t cp = b;
    if (b >= 0x80 && enc == Encoding::kCp1252 && b < 0xA0) cp = kCp1252High[b - 0x80];
    if (b >= 0x80 && (enc == Encoding::kAscii || cp == 0))
      return fail(Diagnostic::error("nkia_source_encoding",
                                    fmt::format("byte 0x{:02x} has no character in {}, the encoding the file declares",
                                                b, decl->name),
                                    fmt::format("{}, or declare the encoding the file is really in", kSaveAsUtf8))
                      .at(byte_location(text, i, file)));
    append_utf8(out, cp);
  }
  return out;
}

}  // namespace nki_agent
