#include "nki/target_toml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nki_agent {

Result<toml::table> parse_target_toml(std::string_view text, std::string_view origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    Diagnostic d =
        Diagnostic::error("nkia_hardware_syntax", fmt::format("{}: not valid TOML: {}", origin, e.description()),
                          "fix the TOML syntax (https://toml.io)");
    d.loc.file = std::string(origin);
    d.loc.line = static_cast<int>(e.source().begin.line);
    d.loc.col = static_cast<int>(e.source().begin.column);
    return fail(std::move(d));
  }
}

Result<double> TableReader::number(std::string_view key, std::optional<double> dflt, double lo, double hi) {
  used_.insert(std::string(key));
  const toml::node* n = t_ ? t_->get(key) : nullptr;
  if (!n) {
    if (dflt) return *dflt;
    return missing(key);
  }
  double v;
  if (auto f = n->value_exact<double>())
    v = *f;
  else if (auto i = n->value_exact<int64_t>())
    v = static_cast<double>(*i);
  else
    return bad(key, "a number");
  if (!std::isfinite(v) || v < lo || v > hi)
    return fail(invalid(fmt::format("{} = {} is out of range [{}, {}]", where(key), v, lo, hi)));
  return v;
}

Result<int64_t> TableReader::integer(std::string_view key, std::optional<int64_t> dflt, int64_t lo, int64_t hi) {
  used_.insert(std::string(key));
  const toml::node* n = t_ ? t_->get(key) : nullptr;
  if (!n) {
    if (dflt) return *dflt;
    return missing(key);
  }
  auto i = n->value_exact<int64_t>();
  if (!i) return bad(key, "an integer");
  if (*i < lo || *i > hi) return fail(invalid(fmt::format("{} = {} is out of range [{}, {}]", where(key), *i, lo, hi)));
  return *i;
}

Result<std::string> TableReader::string(std::string_view key, std::optional<std::string> dflt) {
  used_.insert(std::string(key));
  const toml::node* n = t_ ? t_->get(key) : nullptr;
  if (!n) {
    if (dflt) return *dflt;
    return missing(key);
  }
  auto s = n->value_exact<std::string>();
  if (!s) return bad(key, "a string");
  return *s;
}

Result<std::optional<bool>> TableReader::flag(std::string_view key) {
  used_.insert(std::string(key));
  const toml::node* n = t_ ? t_->get(key) : nullptr;
  if (!n) return std::optional<bool>{};
  auto b = n->value_exact<bool>();
  if (!b) return bad(key, "true or false");
  return std::optional<bool>(*b);
}

Result<std::vector<std::string>> TableReader::strings(std::string_view key) {
  used_.insert(std::string(key));
  std::vector<std::string> out;
  const toml::node* n = t_ ? t_->get(key) : nullptr;
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) return bad(key, "an array of strings");
  for (const auto& e : *a) {
    auto s = e.value_exact<std::string>();
    if (!s) return bad(key, "an array of strings");
    out.push_back(*s);
  }
  return out;
}

Result<void> TableReader::only(std::initializer_list<std::string_view> keys) const {
  return only(std::span<const std::string_view>(keys.begin(), keys.size()));
}

Result<void> TableReader::only(std::span<const std::string_view> keys) const {
  if (!t_) return {};
  for (const auto& [k, v] : *t_)
    if (std::find(keys.begin(), keys.end(), k.str()) == keys.end())
      return fail(invalid(fmt::format("unknown key {}", where(k.str())))
                      .with_note("check the spelling against data/targets/trn1.toml"));
  return {};
}

Result<void> TableReader::finish() const {
  if (!t_) return {};
  for (const auto& [k, v] : *t_)
    if (!used_.count(std::string(k.str())))
      return fail(invalid(fmt::format("unknown key {}", where(k.str())))
                      .with_note("check the spelling against data/targets/trn1.toml"));
  return {};
}

Diagnostic TableReader::invalid(std::string msg) const {
  return Diagnostic::error("nkia_hardware_invalid", fmt::format("{}: {}", origin_, msg),
                           "see data/targets/trn1.toml and docs/cost-model.md for every field");
}

std::string TableReader::where(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

tl::unexpected<Diagnostic> TableReader::missing(std::string_view key) const {
  return fail(invalid(fmt::format("{} is missing", where(key))));
}

tl::unexpected<Diagnostic> TableReader::bad(std::string_view key, std::string_view what) const {
  return fail(invalid(fmt::format("{} must be {}", where(key), what)));
}

Result<const toml::table*> sub_table(const toml::table& root, std::string_view key, std::string_view origin,
                                     bool required) {
  const toml::node* n = root.get(key);
  if (!n) {
    if (!required) return static_cast<const toml::table*>(nullptr);
    return fail("nkia_hardware_invalid", fmt::format("{}: table [{}] is missing", origin, key),
                "see data/targets/trn1.toml for the expected layout");
  }
  if (!n->as_table())
    return fail("nkia_hardware_invalid", fmt::format("{}: {} must be a table", origin, key),
                "see data/targets/trn1.toml for the expected layout");
  return n->as_table();
}

}  // namespace nki_agent
