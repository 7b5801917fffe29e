// nki/target_toml.h — reading a target description's TOML tables (data/targets/<t>.toml): each
// field checked for presence, type and range, unknown keys refused (a typo must not fall back to a
// default), every failure a nkia_hardware_invalid Diagnostic naming the field. Used by the target
// limits here (nki/target.cpp) and by the cost model's hardware description (cost/hardware.cpp).
//
// Never: defaults for a key the caller did not name, or an exception out of this file (toml++
// reports syntax errors by exception; parse_target_toml turns them into nkia_hardware_syntax).
#pragma once

#include <toml++/toml.h>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

// Parses TOML text; `origin` names it in Diagnostics. Code nkia_hardware_syntax, located at the
// error.
Result<toml::table> parse_target_toml(std::string_view text, std::string_view origin);

// Reads one table's fields, remembering which keys were consumed so the rest can be refused. A
// null table reads as empty (every key missing).
class TableReader {
 public:
  TableReader(const toml::table* t, std::string path, std::string_view origin)
      : t_(t), path_(std::move(path)), origin_(origin) {}

  bool present(std::string_view key) const { return t_ && t_->contains(key); }
  const std::string& path() const { return path_; }

  Result<double> number(std::string_view key, std::optional<double> dflt, double lo, double hi);
  Result<int64_t> integer(std::string_view key, std::optional<int64_t> dflt, int64_t lo, int64_t hi);
  Result<std::string> string(std::string_view key, std::optional<std::string> dflt);
  Result<std::optional<bool>> flag(std::string_view key);
  Result<std::vector<std::string>> strings(std::string_view key);

  // Refuses keys outside `keys`, before anything is read: a misspelt key is reported as itself,
  // not as the key it was meant to be missing.
  Result<void> only(std::initializer_list<std::string_view> keys) const;
  Result<void> only(std::span<const std::string_view> keys) const;
  // Refuses keys nobody read.
  Result<void> finish() const;

  Diagnostic invalid(std::string msg) const;
  std::string where(std::string_view key) const;

 private:
  tl::unexpected<Diagnostic> missing(std::string_view key) const;
  tl::unexpected<Diagnostic> bad(std::string_view key, std::string_view what) const;

  const toml::table* t_;
  std::string path_;
  std::string_view origin_;
  std::set<std::string> used_;
};

// The table `key` of `root`: null when absent and not required; nkia_hardware_invalid when absent
// and required, or not a table.
Result<const toml::table*> sub_table(const toml::table& root, std::string_view key, std::string_view origin,
                                     bool required);

// The [target] and [limits] tables of a parsed target description (nki/target.cpp).
struct TargetSpec;
Result<TargetSpec> read_target(const toml::table& root, std::string_view origin);

// Early return of a failed Result, binding the value otherwise.
#define NKIA_TRY(var, expr)                   \
  auto var##_r = (expr);                      \
  if (!var##_r) return fail(var##_r.error()); \
  auto var = std::move(*var##_r)

#define NKIA_TRY_VOID(expr)           \
  do {                                \
    auto r_ = (expr);                 \
    if (!r_) return fail(r_.error()); \
  } while (0)

}  // namespace nki_agent
