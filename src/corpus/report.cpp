// Corpus reports (corpus/report.h).
#include "corpus/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace nki_agent::corpus {

namespace fs = std::filesystem;

namespace {

nlohmann::json histogram(const std::map<std::string, int64_t>& m) {
  std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [k, n] : v) out.push_back({{"name", k}, {"count", n}});
  return out;
}

}  // namespace

Result<nlohmann::json> corpus_report(const std::string& dir) {
  std::ifstream f(fs::path(dir) / "corpus.jsonl");
  if (!f)
    return fail("nkia_task_not_found", fmt::format("{} holds no corpus.jsonl", dir),
                "give the --out folder of `nki-agent corpus generate`");
  std::map<std::string, int64_t> ops, cats, task_cats, levels, dtypes, structures, splits;
  std::vector<int64_t> buckets(10, 0);
  std::vector<std::tuple<double, std::string, std::string>> nearest;
  int64_t tasks = 0, with_baseline = 0;
  std::string line;
  int lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return fail("nkia_task_invalid", fmt::format("{}/corpus.jsonl:{}: not a JSON object", dir, lineno),
                  "regenerate the corpus");
    ++tasks;
    for (const auto& n : j.value("nodes", nlohmann::json::array())) {
      ++ops[n.value("op", "?")];
      ++cats[n.value("category", "?")];
    }
    ++task_cats[j.value("category", "?")];
    ++levels[fmt::format("level{}", j.value("level", 0))];
    ++dtypes[j.value("dtype", "?")];
    ++structures[j.value("structure", "?")];
    ++splits[j.value("split", "?")];
    if (j.value("baseline", false)) ++with_baseline;
    const auto& nn = j.value("nearest_nkibench", nlohmann::json::object());
    const double s = nn.value("score", 0.0);
    buckets[std::min(9, int(s * 10))]++;
    nearest.emplace_back(s, j.value("id", ""), nn.value("id", ""));
  }
  std::sort(nearest.begin(), nearest.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b) : std::get<1>(a) < std::get<1>(b);
  });
  nlohmann::json r;
  r["dir"] = dir;
  r["tasks"] = tasks;
  r["with_baseline"] = with_baseline;
  r["ops"] = histogram(ops);
  r["op_categories"] = histogram(cats);
  r["task_categories"] = histogram(task_cats);
  r["levels"] = histogram(levels);
  r["dtypes"] = histogram(dtypes);
  r["structures"] = histogram(structures);
  r["splits"] = histogram(splits);
  nlohmann::json sim = nlohmann::json::array();
  for (int b = 0; b < 10; ++b)
    sim.push_back({{"range", fmt::format("{:.1f}-{:.1f}", b / 10.0, (b + 1) / 10.0)}, {"count", buckets[b]}});
  r["similarity"] = sim;
  nlohmann::json top = nlohmann::json::array();
  for (size_t i = 0; i < nearest.size() && i < 10; ++i)
    top.push_back(
        {{"task", std::get<1>(nearest[i])}, {"nearest", std::get<2>(nearest[i])}, {"score", std::get<0>(nearest[i])}});
  r["closest"] = top;
  std::ifstream sf(fs::path(dir) / "corpus_summary.json");
  std::stringstream ss;
  ss << sf.rdbuf();
  auto summary = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!summary.is_discarded() && summary.is_object()) {
    r["funnel"] = summary.value("funnel", nlohmann::json::object());
    r["similarity_threshold"] = summary.value("similarity_threshold", 0.0);
    r["bands"] = summary.value("bands", nlohmann::json::object());
    r["vocabulary_ops"] = summary.value("vocabulary_ops", 0);
  }
  return r;
}

std::string format_corpus_report(const nlohmann::json& r) {
  std::string s = fmt::format("Corpus {}: {} tasks ({} with a baseline.py), {} distinct ops used\n", r.value("dir", ""),
                              r.value("tasks", 0), r.value("with_baseline", 0), r["ops"].size());
  auto table = [&](const char* title, const char* key, size_t limit) {
    s += fmt::format("\n{}\n\n| {} | tasks |\n|---|---:|\n", title, key);
    size_t n = 0;
    for (const auto& e : r[key]) {
      if (n++ == limit) {
        s += fmt::format("| ({} more) | |\n", r[key].size() - limit);
        break;
      }
      s += fmt::format("| {} | {} |\n", e.value("name", ""), e.value("count", 0));
    }
  };
  table("Levels", "levels", 10);
  table("Dtypes", "dtypes", 10);
  table("Structures", "structures", 10);
  table("Task categories (the heaviest op's)", "task_categories", 20);
  table("Op categories (every node)", "op_categories", 20);
  table("Ops (every node)", "ops", 200);
  table("Splits", "splits", 10);
  if (r.contains("funnel") && r["funnel"].contains("stages")) {
    s += fmt::format("\nFilter funnel: {} candidates -> {} kept\n\n| stage | dropped | left |\n|---|---:|---:|\n",
                     r["funnel"].value("candidates", 0), r["funnel"].value("kept", 0));
    for (const auto& st : r["funnel"]["stages"])
      s += fmt::format("| {} | {} | {} |\n", st.value("stage", ""), st.value("dropped", 0), st.value("left", 0));
  }
  s += fmt::format("\nSimilarity to the nearest NKIBench task (threshold {})\n\n| score | tasks |\n|---|---:|\n",
                   r.value("similarity_threshold", 0.0));
  for (const auto& b : r["similarity"]) s += fmt::format("| {} | {} |\n", b.value("range", ""), b.value("count", 0));
  s += "\nClosest to NKIBench\n\n| task | nearest | score |\n|---|---|---:|\n";
  for (const auto& c : r["closest"])
    s += fmt::format("| {} | {} | {:.3f} |\n", c.value("task", ""), c.value("nearest", ""), c.value("score", 0.0));
  return s;
}

}  // namespace nki_agent::corpus
