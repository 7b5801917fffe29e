// The corpus pipeline (corpus/corpus.h).
#include "corpus/corpus.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/log.h"
#include "corpus/decontam.h"
#include "corpus/emit.h"
#include "corpus/generator.h"
#include "corpus/shapes.h"
#include "corpus/signature.h"
#include "corpus/vocabulary.h"

namespace nki_agent::corpus {

namespace fs = std::filesystem;

namespace {

struct Candidate {
  int64_t index = 0;  // draw index; planted ones are negative
  TaskGraph graph;
  EmittedTask task;
  std::string key, op_graph;
  std::string stage;  // empty: kept so far; else where it was dropped
  std::string reason;
  Similarity sim;
  FilterVerdict verdict;
  bool filtered = false;
};

std::string provenance(uint64_t seed, int64_t index) {
  return index < 0 ? fmt::format("planted candidate {} ({})", -index, kGeneratorVersion)
                   : fmt::format("generator {}, seed {}, index {}", kGeneratorVersion, seed, index);
}

double task_atol(const TaskGraph& g, const EmittedTask& t) {
  // A bfloat16 / float16 task: the norm-level tolerance. Its element atol widens for the error a
  // kernel's roundings carry (corpus/emit.h), which says nothing about how large an output must be
  // for a zero kernel to fail: the norm bound (and the verifier's zero_output check) decide that.
  if (g.dtype != "float32") return low_precision_tolerance(g).norm;
  // The [tolerance] written by emit_task: read it back rather than repeat its rule.
  const std::string key = g.dtype + " = { atol = ";
  const size_t at = t.task_toml.find(key);
  return at == std::string::npos ? 1e-4 : std::stod(t.task_toml.substr(at + key.size()));
}

nlohmann::json shape_json(const Shape& s) {
  return nlohmann::json(s);
}

Result<void> write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f)
    return fail("nkia_unwritable", fmt::format("cannot write {}", p.string()),
                "check the folder exists and is writable");
  return {};
}

nlohmann::json manifest_line(const Candidate& c, const EmittedTask& t, uint64_t seed, const std::string& split) {
  const TaskGraph& g = c.graph;
  auto ps = value_shapes(g, false);
  auto vs = value_shapes(g, true);
  nlohmann::json j;
  j["id"] = t.id;
  j["folder"] = t.folder;
  j["name"] = t.name;
  j["level"] = g.level;
  j["category"] = t.category;
  j["structure"] = g.structure;
  j["operation"] = t.operation;
  j["op_graph"] = c.op_graph;
  j["op_graph_parsed"] = c.sim.op_graph;
  j["dedup_key"] = c.key;
  j["shape_class"] = shape_class(g);
  j["seed"] = seed;
  j["index"] = c.index;
  j["generator"] = kGeneratorVersion;
  j["dtype"] = g.dtype;
  nlohmann::json nodes = nlohmann::json::array();
  std::set<std::string> cats;
  for (const GraphNode& n : g.nodes) {
    nlohmann::json nj;
    nj["op"] = n.op;
    nj["category"] = std::string(find_op(n.op)->category);
    nj["inputs"] = n.inputs;
    nlohmann::json params = nlohmann::json::array();
    for (const auto& [k, v] : n.params) params.push_back({k, v});
    nj["params"] = params;
    if (!n.module.empty()) nj["module"] = n.module;
    nodes.push_back(nj);
  }
  j["nodes"] = nodes;
  nlohmann::json inputs = nlohmann::json::array();
  for (size_t i = 0; i < g.inputs.size(); ++i)
    inputs.push_back({{"name", g.inputs[i].name},
                      {"dtype", g.inputs[i].dtype},
                      {"shape", shape_json((*ps)[i])},
                      {"variant_shape", shape_json((*vs)[i])}});
  j["inputs"] = inputs;
  nlohmann::json outputs = nlohmann::json::array();
  for (int o : g.outputs) outputs.push_back({{"shape", shape_json((*ps)[o])}, {"variant_shape", shape_json((*vs)[o])}});
  j["outputs"] = outputs;
  j["filters"] = c.filtered ? c.verdict.checks : nlohmann::json("not run");
  j["nearest_nkibench"] = {{"id", c.sim.nearest}, {"score", c.sim.score}};
  j["split"] = split;
  j["baseline"] = !t.baseline_py.empty();
  return j;
}

nlohmann::json rejected_line(const Candidate& c) {
  nlohmann::json j;
  j["index"] = c.index;
  j["stage"] = c.stage;
  j["reason"] = c.reason;
  j["op_graph"] = c.op_graph;
  j["operation"] = c.task.operation;
  j["nearest_nkibench"] = {{"id", c.sim.nearest}, {"score", c.sim.score}};
  return j;
}

// Copies NKIBench's lib (the nkibench_ops package the baselines import) into the corpus, so the
// corpus folder is whole on its own: moved or copied elsewhere, its baselines still import.
// Regular files only, in sorted order, without __pycache__ or compiled files: the copy is the
// same bytes from run to run. An old lib (a folder, or the symbolic link earlier versions wrote)
// is removed first; a link is removed as a link, never followed.
Result<void> copy_lib(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::is_symlink(to, ec))
    fs::remove(to, ec);
  else
    fs::remove_all(to, ec);
  if (ec)
    return fail("nkia_unwritable", fmt::format("cannot replace {}: {}", to.string(), ec.message()),
                "check the folder is writable");
  if (!fs::is_directory(from, ec))
    return fail("nkia_task_not_found", fmt::format("{} is not a folder", from.string()),
                "give --nkibench the NKIBench root, whose lib/ holds nkibench_ops");
  std::vector<fs::path> files;
  auto it = fs::recursive_directory_iterator(from, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (it->is_symlink(ec) || p.filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    const std::string ext = p.extension().string();
    if (it->is_regular_file(ec) && ext != ".pyc" && ext != ".pyo") files.push_back(fs::relative(p, from, ec));
  }
  if (ec)
    return fail("nkia_task_not_found", fmt::format("cannot read {}: {}", from.string(), ec.message()),
                "check NKIBench's lib/ is readable");
  std::sort(files.begin(), files.end());
  for (const fs::path& rel : files) {
    fs::create_directories((to / rel).parent_path(), ec);
    std::ifstream in(from / rel, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in)
      return fail("nkia_task_not_found", fmt::format("cannot read {}", (from / rel).string()),
                  "check NKIBench's lib/ is readable");
    if (auto r = write_text(to / rel, text.str()); !r) return fail(r.error());
  }
  return {};
}

}  // namespace

Result<CorpusResult> generate_corpus(const CorpusOptions& opt) {
  if (opt.count < 1 || opt.count > 1000000)
    return fail("nkia_bad_argument", fmt::format("--count {} is out of range", opt.count), "give 1 to 1000000 tasks");
  if (opt.out.empty()) return fail("nkia_bad_argument", "no --out folder given", "give --out DIR");
  std::error_code ec;
  const fs::path out(opt.out);
  if (fs::exists(out / "corpus.jsonl", ec) && !opt.force)
    return fail("nkia_bad_argument", fmt::format("{} already holds a corpus", opt.out),
                "give another --out folder, or --force to replace it");
  const std::string nkibench = opt.nkibench.empty() ? "tasks/nkibench" : opt.nkibench;
  auto refs = load_nkibench_sources(nkibench);
  if (!refs) return fail(refs.error());

  GeneratorOptions gopt;
  gopt.baseline_only = opt.baseline_only;
  std::vector<Candidate> all;  // every candidate considered, in pool order (planted first)
  std::set<std::string> seen;
  std::vector<size_t> kept;
  std::map<std::string, int64_t> stage_counts;
  int64_t next_index = 0;
  const int64_t max_index = opt.count * 20 + 200;
  int refs_parsed = 0;
  int64_t peak_rss = 0;
  for (size_t i = 0; i < opt.planted.size(); ++i) {
    Candidate c;
    c.index = -int64_t(i + 1);
    c.graph = opt.planted[i];
    all.push_back(std::move(c));
  }
  size_t round_start = 0;
  while (int64_t(kept.size()) < opt.count) {
    // Draw this round's candidates.
    const int64_t want = opt.count - int64_t(kept.size());
    const int64_t draws = round_start == 0 && !opt.planted.empty() ? want + want / 2 + 4 : want + want / 2 + 4;
    if (next_index >= max_index)
      return fail("nkia_bad_argument",
                  fmt::format("only {} of {} tasks passed after {} candidates", kept.size(), opt.count, next_index),
                  "the filters drop most candidates: lower --count or check rejected.jsonl's reasons");
    for (int64_t k = 0; k < draws && next_index < max_index; ++k) {
      Candidate c;
      c.index = next_index++;
      c.graph = generate_graph(opt.seed, uint64_t(c.index), gopt);
      all.push_back(std::move(c));
    }
    std::vector<size_t> live;
    for (size_t i = round_start; i < all.size(); ++i) {
      Candidate& c = all[i];
      c.task = emit_task(c.graph, 0, provenance(opt.seed, c.index));
      c.key = dedup_key(c.graph);
      c.op_graph = canonical_op_graph(c.graph);
      if (!seen.insert(c.key).second) {
        c.stage = "dedup";
        c.reason = "the same op graph and shape class as an earlier candidate";
        continue;
      }
      live.push_back(i);
    }
    // Decontamination and the vocabulary check.
    std::vector<CandidateSource> srcs;
    for (size_t i : live) srcs.push_back({fmt::format("cand{}", i), all[i].task.task_py});
    auto sims = compare_to_nkibench(srcs, *refs, opt.filter.python);
    if (!sims) return fail(sims.error());
    refs_parsed = sims->references_parsed;
    std::vector<size_t> live2;
    for (size_t k = 0; k < live.size(); ++k) {
      Candidate& c = all[live[k]];
      c.sim = sims->candidates[k];
      if (!c.sim.graph_match.empty()) {
        c.stage = "decontam_graph";
        c.reason = fmt::format("the op graph of NKIBench {}", c.sim.graph_match);
      } else if (c.sim.score >= opt.similarity_threshold) {
        c.stage = "decontam_similarity";
        c.reason = fmt::format("similarity {:.3f} to NKIBench {} reaches the threshold {}", c.sim.score, c.sim.nearest,
                               opt.similarity_threshold);
      } else if (!c.sim.unknown_calls.empty()) {
        c.stage = "vocabulary";
        c.reason = "calls outside the vocabulary: " + fmt::format("{}", fmt::join(c.sim.unknown_calls, ", "));
      } else {
        live2.push_back(live[k]);
      }
    }
    // The execution filters.
    if (opt.filters) {
      std::vector<FilterTask> fts;
      for (size_t i : live2) {
        FilterTask ft;
        ft.id = fmt::format("cand{}", i);
        ft.task_py = all[i].task.task_py;
        ft.atol = task_atol(all[i].graph, all[i].task);
        for (size_t p = 0; p < all[i].graph.inputs.size(); ++p)
          if (all[i].graph.inputs[p].dtype == "int64") ft.int_high[int(p)] = all[i].graph.inputs[p].high;
        fts.push_back(std::move(ft));
      }
      FilterOptions fo = opt.filter;
      fo.jobs = opt.jobs;
      fo.seed = opt.seed;
      auto run = run_filters(fts, fo);
      if (!run) return fail(run.error());
      peak_rss = std::max(peak_rss, run->peak_rss_mib);
      for (size_t k = 0; k < live2.size(); ++k) {
        Candidate& c = all[live2[k]];
        c.verdict = run->verdicts[k];
        c.filtered = true;
        if (!c.verdict.passed) {
          c.stage = "filter_" + c.verdict.failed;
          c.reason = c.verdict.checks[c.verdict.failed].get<std::string>();
        }
      }
    }
    for (size_t i : live2)
      if (all[i].stage.empty() && int64_t(kept.size()) < opt.count) kept.push_back(i);
    NKIA_LOG_INFO("corpus: {} of {} kept after {} candidates", kept.size(), opt.count, all.size());
    round_start = all.size();
  }

  // The funnel over the candidates up to the last kept one (later draws of the last round do not
  // count: the corpus would be the same without them).
  const size_t last = kept.empty() ? 0 : kept.back();
  CorpusResult result;
  nlohmann::json rejected = nlohmann::json::array();
  std::string rejected_text;
  int64_t considered = 0;
  for (size_t i = 0; i <= last && i < all.size(); ++i) {
    ++considered;
    if (!all[i].stage.empty()) {
      ++stage_counts[all[i].stage];
      nlohmann::json r = rejected_line(all[i]);
      rejected_text += r.dump() + "\n";
      if (all[i].index < 0) result.planted_rejected.push_back(r);
    }
  }
  // Write.
  for (const char* sub : {"level1", "level2", "level3"}) fs::remove_all(out / sub, ec);
  fs::create_directories(out, ec);
  if (ec)
    return fail("nkia_unwritable", fmt::format("cannot create {}: {}", opt.out, ec.message()),
                "give a folder you can write");
  if (auto r = copy_lib(fs::path(nkibench) / "lib", out / "lib"); !r) return fail(r.error());
  std::string manifest;
  std::map<std::string, int64_t> levels;
  for (size_t k = 0; k < kept.size(); ++k) {
    Candidate& c = all[kept[k]];
    EmittedTask t = emit_task(c.graph, int64_t(k + 1), provenance(opt.seed, c.index));
    const fs::path dir = out / t.folder;
    fs::create_directories(dir, ec);
    if (auto r = write_text(dir / "task.py", t.task_py); !r) return fail(r.error());
    if (auto r = write_text(dir / "task.toml", t.task_toml); !r) return fail(r.error());
    if (!t.baseline_py.empty())
      if (auto r = write_text(dir / "baseline.py", t.baseline_py); !r) return fail(r.error());
    const int bucket = std::stoi(c.key.substr(0, 4), nullptr, 16) % 1000;
    const std::string split = bucket < int(opt.validation_fraction * 1000) ? "validation" : "train";
    manifest += manifest_line(c, t, opt.seed, split).dump() + "\n";
    ++levels[fmt::format("level{}", c.graph.level)];
  }
  if (auto r = write_text(out / "corpus.jsonl", manifest); !r) return fail(r.error());
  if (auto r = write_text(out / "rejected.jsonl", rejected_text); !r) return fail(r.error());
  nlohmann::json s;
  s["generator"] = kGeneratorVersion;
  s["seed"] = opt.seed;
  s["count"] = opt.count;
  s["baseline_only"] = opt.baseline_only;
  s["filters_run"] = opt.filters;
  s["similarity_threshold"] = opt.similarity_threshold;
  s["validation_fraction"] = opt.validation_fraction;
  s["bands"] = {{"runtime_s", opt.filter.runtime_band_s}, {"memory_mib", opt.filter.memory_band_mib}};
  s["nkibench"] = {{"tasks", refs->size()}, {"op_graphs_parsed", refs_parsed}};
  s["vocabulary_ops"] = vocabulary().size();
  nlohmann::json funnel;
  funnel["candidates"] = considered;
  int64_t left = considered;
  nlohmann::json stages = nlohmann::json::array();
  std::vector<std::string> order = {"dedup", "decontam_graph", "decontam_similarity", "vocabulary"};
  for (const auto& f : filter_check_names()) order.push_back("filter_" + f);
  for (const auto& st : order) {
    left -= stage_counts[st];
    stages.push_back({{"stage", st}, {"dropped", stage_counts[st]}, {"left", left}});
  }
  funnel["stages"] = stages;
  funnel["kept"] = int64_t(kept.size());
  s["funnel"] = funnel;
  s["levels"] = levels;
  if (auto r = write_text(out / "corpus_summary.json", s.dump(2) + "\n"); !r) return fail(r.error());
  result.kept = int64_t(kept.size());
  s["peak_filter_rss_mib"] = peak_rss;  // not in the file: it differs between runs
  result.summary = s;
  return result;
}

}  // namespace nki_agent::corpus
