// agent/bench_merge.cpp — shards' databases into one run.
#include "agent/bench_merge.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <utility>

#include "agent/bench.h"
#include "agent/loop.h"
#include "agent/store.h"

namespace nki_agent {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string option_text(const RunInfo& run, const char* key) {
  if (!run.options.is_object() || !run.options.contains(key)) return "(not recorded)";
  const json& v = run.options[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Why two runs are not one benchmark; empty when they are.
std::string difference(const RunInfo& a, const RunInfo& b) {
  if (a.model != b.model) return fmt::format("model '{}' against '{}'", a.model, b.model);
  for (const char* key : {"prompt_version", "simulator_version"})
    if (option_text(a, key) != option_text(b, key))
      return fmt::format("{} {} against {}", key, option_text(a, key), option_text(b, key));
  json oa = a.options.is_object() ? a.options : json::object(), ob = b.options.is_object() ? b.options : json::object();
  oa.erase("shard");
  ob.erase("shard");
  for (const auto* o : {&oa, &ob})
    for (auto it = o->begin(); it != o->end(); ++it) {
      const json va = oa.value(it.key(), json()), vb = ob.value(it.key(), json());
      if (va != vb) return fmt::format("option {} {} against {}", it.key(), va.dump(), vb.dump());
    }
  return {};
}

}  // namespace

Result<MergeSummary> merge_bench_databases(const MergeOptions& o) {
  if (o.inputs.empty())
    return tl::unexpected(Diagnostic::error("nkia_bad_argument", "bench merge: no input database",
                                            "give the shards' databases: bench merge A.sqlite B.sqlite -o all.sqlite"));
  std::error_code ec;
  if (fs::exists(o.out, ec))
    return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("bench merge: {} exists", o.out),
                                            "merge writes a new database: remove it or give another -o"));
  struct Input {
    std::string path;
    RunInfo run;
    std::vector<TaskRow> rows;
  };
  std::vector<Input> runs;
  for (const auto& path : o.inputs) {
    auto store = ResultStore::open_existing(path);
    if (!store) return tl::unexpected(store.error());
    auto infos = (*store)->runs();
    if (!infos) return tl::unexpected(infos.error());
    if (infos->empty())
      return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("bench merge: {} holds no run", path)));
    for (auto it = infos->rbegin(); it != infos->rend(); ++it) {  // oldest first
      auto rows = (*store)->results(it->run_id);
      if (!rows) return tl::unexpected(rows.error());
      runs.push_back({path, *it, std::move(*rows)});
    }
  }
  const Input& first = runs.front();
  for (size_t i = 1; i < runs.size(); ++i)
    if (std::string why = difference(first.run, runs[i].run); !why.empty())
      return tl::unexpected(Diagnostic::error(
          "nkia_bad_argument",
          fmt::format("bench merge: run {} of {} and run {} of {} are different benchmarks: {}", first.run.run_id,
                      first.path, runs[i].run.run_id, runs[i].path, why),
          "merge only the shards of one benchmark: the same model, prompt version, simulator version and options "
          "(bench --shard I/N with everything else alike)"));

  RunInfo merged = first.run;
  if (!o.run_id.empty()) merged.run_id = o.run_id;
  if (merged.options.is_object()) merged.options.erase("shard");
  merged.key = bench_run_key(merged.model, merged.tasks_root, merged.options);

  MergeSummary summary;
  summary.out = o.out;
  summary.run_id = merged.run_id;
  summary.runs = static_cast<int>(runs.size());
  std::map<std::pair<std::string, int>, TaskRow> rows;
  for (auto& in : runs)
    for (auto& r : in.rows) {
      r.run_id = merged.run_id;
      const auto key = std::make_pair(r.task_id, r.sample);
      auto it = rows.find(key);
      if (it == rows.end()) {
        rows.emplace(key, std::move(r));
        continue;
      }
      ++summary.duplicates;
      if (it->second.status == kStatusInterrupted && r.status != kStatusInterrupted) it->second = std::move(r);
    }
  auto store = ResultStore::open(o.out);
  if (!store) return tl::unexpected(store.error());
  if (auto a = (*store)->add_run(merged); !a) return tl::unexpected(a.error());
  for (const auto& [key, r] : rows) {
    if (auto a = (*store)->add_result(r); !a) return tl::unexpected(a.error());
    ++summary.rows;
  }
  return summary;
}

}  // namespace nki_agent
