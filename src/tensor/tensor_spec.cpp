#include "tensor/tensor_spec.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace nki_agent {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

constexpr const char* kHint = "write name=dtype[d0,d1,...], e.g. a=bfloat16[128,512]";

}  // namespace

std::string TensorSpec::to_string() const {
  return fmt::format("{}={}{}", name, dtype_name(dtype), shape_str(shape));
}

Result<TensorSpec> parse_tensor_spec(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return fail("nkia_bad_tensor_spec", fmt::format("bad tensor spec '{}': {}", text, why), kHint);
  };
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) return bad("missing '='");
  TensorSpec spec;
  spec.name = std::string(trim(text.substr(0, eq)));
  if (spec.name.empty()) return bad("empty name");
  for (char c : spec.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return bad("the name must be an identifier");
  std::string_view rest = trim(text.substr(eq + 1));
  size_t lb = rest.find('[');
  if (lb == std::string_view::npos || rest.back() != ']') return bad("missing [shape]");
  std::string_view dt = trim(rest.substr(0, lb));
  auto dtype = dtype_from_name(dt);
  if (!dtype) return bad(fmt::format("unknown dtype '{}'", dt));
  spec.dtype = *dtype;
  std::string_view dims = trim(rest.substr(lb + 1, rest.size() - lb - 2));
  int64_t total = 1;
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view tok = trim(dims.substr(0, comma));
    int64_t d = 0;
    auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (tok.empty() || ec != std::errc() || ptr != tok.data() + tok.size() || d < 0)
      return bad(fmt::format("'{}' is not a dimension", tok));
    if (d > 0 && total > kMaxSpecElements / d) return bad("more than 2^31 elements");
    total *= d;
    spec.shape.push_back(d);
    if (comma == std::string_view::npos) break;
    dims = dims.substr(comma + 1);
    if (trim(dims).empty()) break;  // a trailing comma, as in Python's (5,)
  }
  return spec;
}

}  // namespace nki_agent
