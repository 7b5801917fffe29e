// runtime/python_source.h — the text of a Python source file, read as Python reads it.
//
// Python source is UTF-8 unless its first or second line declares another encoding (PEP 263,
// `# -*- coding: latin-1 -*-`; the second line counts only when the first is a comment or blank).
// nki-agent carries sources as UTF-8 (they travel in JSON), so a declared latin-1 (iso-8859-1),
// cp1252 (windows-1252) or ascii file is decoded into UTF-8 here; the declaration stays in the
// text, where Python ignores it (source given as text has no encoding left to declare). A leading
// UTF-8 byte-order mark is dropped, as Python's own reader does. Anything else is a Diagnostic at
// the first byte that cannot be read, never text with replacement characters.
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace nki_agent {

// `bytes` (the contents of `file`, which names it in Diagnostics) as UTF-8 text. Codes:
// nkia_not_utf8 (a byte that is not UTF-8, in a file that declares no other encoding),
// nkia_source_encoding (a declared encoding nki-agent does not read, a byte the declared encoding
// has no character for, or a byte-order mark that contradicts the declaration).
Result<std::string> python_source_text(std::string_view bytes, const std::string& file);

}  // namespace nki_agent
