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
  NKIA_TRY_VOID(r.only({"partitions", "sbuf_bytes_per_partition", "psum_bytes_per_partition", "psum_banks",
                        "psum_bank_bytes", "psum_fmax", "psum_min_align", "gemm_stationary_fmax", "gemm_moving_fmax",
                        "engine_fmax_sbuf", "engine_fmax_psum", "bn_stats_fmax", "max8_fmax", "gpsimd_partition_group",
                        "gpsimd_gather_max_indices"}));
  constexpr int64_t kBytes = int64_t{1} << 30;
  NKIA_TRY(parts, r.integer("partitions", std::nullopt, 1, 1024));
  NKIA_TRY(sbuf, r.integer("sbuf_bytes_per_partition", std::nullopt, 1, kBytes));
  NKIA_TRY(psum, r.integer("psum_bytes_per_partition", std::nullopt, 1, kBytes));
  NKIA_TRY(banks, r.integer("psum_banks", std::nullopt, 1, 1024));
  NKIA_TRY(bank_bytes, r.integer("psum_bank_bytes", std::nullopt, 4, kBytes));
  NKIA_TRY(psum_fmax, r.integer("psum_fmax", std::nullopt, 1, kBytes / 4));
  NKIA_TRY(psum_align, r.integer("psum_min_align", std::nullopt, 1, 4096));
  NKIA_TRY(stationary, r.integer("gemm_stationary_fmax", std::nullopt, 1, 1 << 20));
  NKIA_TRY(moving, r.integer("gemm_moving_fmax", std::nullopt, 1, 1 << 20));
  NKIA_TRY(fmax_sbuf, r.integer("engine_fmax_sbuf", std::nullopt, 1, 1 << 24));
  NKIA_TRY(fmax_psum, r.integer("engine_fmax_psum", std::nullopt, 1, 1 << 24));
  NKIA_TRY(bn_stats, r.integer("bn_stats_fmax", std::nullopt, 1, 1 << 20));
  NKIA_TRY(max8, r.integer("max8_fmax", std::nullopt, 8, 1 << 24));
  NKIA_TRY(group, r.integer("gpsimd_partition_group", std::nullopt, 1, 1024));
  NKIA_TRY(gather, r.integer("gpsimd_gather_max_indices", std::nullopt, 1, 1 << 24));
  NKIA_TRY_VOID(r.finish());
  if (banks * bank_bytes > psum)
    return fail(r.invalid(
        fmt::format("limits: {} banks of {} bytes do not fit {} PSUM bytes per partition", banks, bank_bytes, psum)));
  if (psum_fmax * 4 > bank_bytes)
    return fail(r.invalid(
        fmt::format("limits: psum_fmax = {} fp32 elements do not fit a PSUM bank of {} bytes", psum_fmax, bank_bytes)));
  if (parts % group != 0)
    return fail(
        r.invalid(fmt::format("limits: gpsimd_partition_group = {} does not divide the {} partitions", group, parts)));
  tg.partitions = static_cast<int>(parts);
  tg.sbuf_bytes_per_partition = sbuf;
  tg.psum_bytes_per_partition = psum;
  tg.psum_banks = static_cast<int>(banks);
  tg.psum_bank_bytes = bank_bytes;
  tg.psum_fmax = static_cast<int>(psum_fmax);
  tg.psum_min_align = static_cast<int>(psum_align);
  tg.gemm_stationary_fmax = static_cast<int>(stationary);
  tg.gemm_moving_fmax = static_cast<int>(moving);
  tg.engine_fmax_sbuf = static_cast<int>(fmax_sbuf);
  tg.engine_fmax_psum = static_cast<int>(fmax_psum);
  tg.bn_stats_fmax = static_cast<int>(bn_stats);
  tg.max8_fmax = static_cast<int>(max8);
  tg.gpsimd_partition_group = static_cast<int>(group);
  tg.gpsimd_gather_max_indices = static_cast<int>(gather);
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
    if (!t) {  // the build's own data is broken: nothing can be checked (test_target reports it)
      std::fprintf(stderr, "nki-agent: data/targets/trn1.toml: %s\n", t.error().message.c_str());
      std::abort();
    }
    return *t;
  }();
  return *kTrn1;
}

}  // namespace nki_agent
