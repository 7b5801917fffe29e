// core/json_bounded.h — JSON from untrusted text, nested no deeper than a bound.
//
// Request bodies, the JSON a model writes in a tool call, labels a trainer sends: text that anyone
// may shape. Parsing it is iterative, but a value nested a million levels deep is still a value
// whose every later walk (dump, a recursive visitor) recurses per level, so such text is refused
// before it is parsed: the depth of its arrays and objects is counted outside strings, stopping at
// the bound.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace nki_agent {

inline constexpr int kMaxJsonDepth = 256;

// The nesting depth of `text`'s arrays and objects, counted outside strings; the count stops once
// it passes `limit` (the result is then limit + 1).
int json_nesting_depth(std::string_view text, int limit = kMaxJsonDepth);

// `text` parsed, or a discarded value (is_discarded()) when it is not JSON or nests deeper than
// `max_depth`.
nlohmann::json parse_json_bounded(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace nki_agent
