// report/markup.h — text made safe for HTML and SVG, and the numbers the report prints.
//
// Everything the report shows from a results database (task names, messages, kernel sources,
// model names, run ids) is hostile text: it goes through escape_markup() and nowhere else. The
// escape also repairs text that is not UTF-8 (each bad byte becomes U+FFFD), so the page is always
// well-formed. Nothing here reads a file or knows the report's layout.
#pragma once

#include <string>
#include <string_view>

namespace nki_agent {

// `text` as HTML/XML character data or a quoted attribute value: & < > " ' escaped, invalid UTF-8
// replaced by U+FFFD, control characters other than tab and newline dropped.
std::string escape_markup(std::string_view text);

// "42.9%" of a share in [0, 1] (one decimal); "—" when `total` is 0.
std::string format_percent(double share, int total);
// A share as "0.667" (three decimals); "—" when `total` is 0.
std::string format_share(double share, int total);
// "1.73×"; "—" for 0 (no speed).
std::string format_speedup(double speedup);
// "12,345".
std::string format_count(int64_t n);
// "$0.0123"; "—" when nothing was stored.
std::string format_cost(double usd, bool stored);
// A number with up to `digits` decimals and no trailing zeros ("0.5", "2", "1.25"), for SVG
// coordinates and labels.
std::string format_number(double v, int digits = 2);

}  // namespace nki_agent
