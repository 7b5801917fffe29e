#include "nki/target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>

#include "nki/target_toml.h"

namespace nki_agent {

Result<TargetSpec> read_target(const toml::table& root, std::string_view origin) {
  TargetSpec tg;
  NKIA_TRY(target_t, sub_table(root, "target", origin, true));
  {
    TableReader r(target_t, "target", origin);
    NKIA_TRY_VOID(r.only({"name", "core", "core_version", "description"}));
    NKIA_TRY(name, r.string("name", std::nullopt));
    NKIA_TRY(core, r.string("core", std::string()));
    NKIA_TRY(version, r.integer("core_version", std::nullopt, 1, 99));
    NKIA_TRY(desc, r.string("description", std::string()));
    if (name.empty()) return fail(r.invalid("target.name is empty"));
    tg.name = name;
    tg.core = core;
    tg.core_version = static_cast<int>(version);
    tg.description = desc;
  }
  NKIA_TRY(limits_t, sub_table(root, "limits", origin, true));
  TableReader r(limits_t, "limits", origin);
  std::vector<std::string_view> keys;
  for (const TargetLimit& l : kTargetLimits) keys.push_back(l.key);
  NKIA_TRY_VOID(r.only(keys));
  for (const TargetLimit& l : kTargetLimits) {
    NKIA_TRY(v, r.integer(l.key, std::nullopt, l.lo, l.hi));
    tg.*l.field = v;
  }
  NKIA_TRY_VOID(r.finish());
  if (tg.psum_banks * tg.psum_bank_bytes > tg.psum_bytes_per_partition)
    return fail(r.invalid(fmt::format("limits: {} banks of {} bytes do not fit {} PSUM bytes per partition",
                                      tg.psum_banks, tg.psum_bank_bytes, tg.psum_bytes_per_partition)));
  if (tg.psum_fmax * 4 > tg.psum_bank_bytes)
    return fail(r.invalid(fmt::format("limits: psum_fmax = {} fp32 elements do not fit a PSUM bank of {} bytes",
                                      tg.psum_fmax, tg.psum_bank_bytes)));
  if (tg.partitions % tg.gpsimd_partition_group != 0)
    return fail(r.invalid(fmt::format("limits: gpsimd_partition_group = {} does not divide the {} partitions",
                                      tg.gpsimd_partition_group, tg.partitions)));
  return tg;
}

namespace {

struct Registry {
  std::vector<std::pair<std::string, Result<TargetSpec>>> targets;  // in embedded_targets() order
};

const Registry& registry() {
  static const Registry kRegistry = [] {
    Registry reg;
    for (const EmbeddedTarget& t : embedded_targets())
      reg.targets.emplace_back(std::string(t.name), parse_target(t.toml, fmt::format("data/targets/{}.toml", t.name)));
    return reg;
  }();
  return kRegistry;
}

}  // namespace

std::string_view target_text(std::string_view name) {
  for (const EmbeddedTarget& t : embedded_targets())
    if (t.name == name) return t.toml;
  return {};
}

Result<TargetSpec> parse_target(std::string_view toml_text, std::string_view origin) {
  NKIA_TRY(root, parse_target_toml(toml_text, origin));
  return read_target(root, origin);
}

Result<const TargetSpec*> target_by_name(std::string_view name) {
  for (const auto& [n, spec] : registry().targets) {
    if (n != name) continue;
    if (!spec) return fail(spec.error());  // a compiled-in file that does not read: its own diagnostic
    return &*spec;
  }
  return fail("nkia_unknown_target", fmt::format("unknown target '{}'", name),
              fmt::format("use one of: {}", fmt::join(target_names(), ", ")));
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (const auto& [n, spec] : registry().targets) out.push_back(n);
  return out;
}

const TargetSpec& target_trn1() {
  static const TargetSpec* const kTrn1 = [] {
    auto t = target_by_name("trn1");
    if (!t) {  // the build's own data is broken: nothing can be checked (test_nki_target reports it)
      std::fprintf(stderr, "nki-agent: data/targets/trn1.toml: %s\n", t.error().message.c_str());
      std::abort();
    }
    return *t;
  }();
  return *kTrn1;
}

}  // namespace nki_agent
