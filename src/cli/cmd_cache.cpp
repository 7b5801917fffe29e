// `nki-agent cache info|prune`: where the PyTorch reference cache is, what it holds against its
// size limit, and evicting its least recently used entries (tasks/reference_cache.h).
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "cli/cli.h"
#include "tasks/reference.h"
#include "tasks/reference_cache.h"

namespace nki_agent::cli {

namespace {

struct CacheOptions {
  std::string dir;        // empty: default_reference_cache_dir()
  std::string max_bytes;  // prune: a size; empty: the limit
  bool all = false;
};

std::string dir_of(const CacheOptions& o) {
  return o.dir.empty() ? default_reference_cache_dir() : o.dir;
}

std::string human_bytes(int64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(n) / 1024;
  size_t u = 0;
  for (; v >= 1024 && u + 1 < std::size(units); ++u) v /= 1024;
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string local_time(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", tm);
}

std::string limit_text(const CacheLimit& limit) {
  return fmt::format("{} ({})", human_bytes(limit.bytes),
                     limit.source == "default" ? fmt::format("default; set {} to change it", kReferenceCacheMaxBytesEnv)
                                               : "from " + limit.source);
}

int run_info(const Context& ctx, const CacheOptions& o) {
  auto limit = reference_cache_limit();
  if (!limit) return report(ctx, limit.error());
  auto stats = reference_cache_stats(dir_of(o));
  if (!stats) return report(ctx, stats.error());
  if (ctx.json) {
    nlohmann::json j = stats->to_json();
    j["limit_bytes"] = limit->bytes;
    j["limit_source"] = limit->source;
    emit_json(ctx, {{"cache", j}});
    return kExitOk;
  }
  fmt::print("reference cache  {}\n", stats->dir);
  fmt::print("entries          {} ({})\n", stats->entries, human_bytes(stats->bytes));
  fmt::print("limit            {}\n", limit_text(*limit));
  if (stats->entries > 0)
    fmt::print("last used        {} (least recently) to {} (most recently)\n", local_time(stats->oldest_use),
               local_time(stats->newest_use));
  if (stats->scratch_bytes > 0) fmt::print("scratch          {} under tmp/\n", human_bytes(stats->scratch_bytes));
  return kExitOk;
}

int run_prune(const Context& ctx, const CacheOptions& o) {
  PruneOptions po;
  if (o.all) {
    po.max_bytes = 0;
  } else if (!o.max_bytes.empty()) {
    auto n = parse_byte_size(o.max_bytes);
    if (!n) return report(ctx, n.error());
    po.max_bytes = *n;
  } else {
    auto limit = reference_cache_limit();
    if (!limit) return report(ctx, limit.error());
    po.max_bytes = limit->bytes;
  }
  const std::string dir = dir_of(o);
  auto r = prune_reference_cache(dir, po);
  if (!r) return report(ctx, r.error());
  if (r->failed > 0)
    return report(ctx, Diagnostic::error("nkia_reference_cache",
                                         fmt::format("{} of the entries to evict in {} could not be removed "
                                                     "({} evicted)",
                                                     r->failed, dir, r->removed),
                                         "check the cache folder's permissions"));
  if (ctx.json) {
    nlohmann::json j = r->to_json();
    j["max_bytes"] = po.max_bytes;
    emit_json(ctx, {{"prune", j}});
    return kExitOk;
  }
  fmt::print("evicted {} entries ({} freed); {} entries ({}) left in {}, within {}\n", r->removed,
             human_bytes(r->freed_bytes), r->left.entries, human_bytes(r->left.bytes), dir, human_bytes(po.max_bytes));
  return kExitOk;
}

}  // namespace

void add_cache_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CacheOptions>();
  auto* cache = app.add_subcommand("cache", "The PyTorch reference cache: where it is, its size, pruning it");
  cache->require_subcommand(1);
  cache->add_option("--cache", o->dir, "The cache folder (default: $NKIA_REFERENCE_CACHE, else the XDG cache)");

  auto* info = cache->add_subcommand("info", "Where the cache is, its entries and bytes, and its size limit");
  info->callback([&ctx, o] { ctx.exit_code = run_info(ctx, *o); });

  auto* prune = cache->add_subcommand(
      "prune", "Evict the least recently used entries until the cache fits its limit, or --max-bytes");
  auto* max = prune->add_option("--max-bytes", o->max_bytes, "Evict down to this size (e.g. 1G, 500M, 0)");
  prune->add_flag("--all", o->all, "Evict every entry")->excludes(max);
  prune->callback([&ctx, o] { ctx.exit_code = run_prune(ctx, *o); });
}

}  // namespace nki_agent::cli
