// reward/study.cpp — the catalogue, the scoring loop and the table.
#include "reward/study.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The value of a `# key: value` header line; empty when there is none.
std::string header(const std::string& source, const std::string& key) {
  std::istringstream in(source);
  std::string line;
  const std::string prefix = "# " + key + ":";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) {
      std::string v = line.substr(prefix.size());
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t\r") + 1);
      return v;
    }
  return "";
}

std::vector<fs::path> python_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".py") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool is_correct_family(const std::string& f) {
  return f == "baseline" || f == "correct_slow" || f == "correct_fast";
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0;
}

Result<std::vector<StudyEntry>> study_catalogue(const std::string& source_dir) {
  const fs::path root(source_dir);
  const fs::path tests = root / "tests" / "tasks";
  if (!fs::is_directory(tests / "hacks"))
    return tl::unexpected(Diagnostic::error(
        "nkia_bad_argument", fmt::format("{} holds no tests/tasks/hacks: not the repository root", source_dir),
        "run from the repository root, or give --source DIR"));
  std::vector<StudyEntry> out;
  std::vector<StudyEntry> broken;
  for (const char* task : {"add_fp32", "bn_relu_add", "int_scale", "layernorm_affine"}) {
    const fs::path b = tests / task / "baseline.py";
    if (!fs::exists(b)) continue;
    const std::string src = read_file(b);
    out.push_back({"baseline", task, fs::relative(b, root).string(), src});
    for (const auto& [call, typo] : {std::pair{"nl.load(", "nl.lod("}, std::pair{"nl.store(", "nl.stor("}}) {
      const size_t at = src.find(call);
      if (at == std::string::npos) continue;
      std::string bad = src;
      bad.replace(at, std::string(call).size(), typo);
      broken.push_back(
          {"compile_error", task, fmt::format("{} with {}) misspelt", fs::relative(b, root).string(), call), bad});
    }
  }
  for (const auto& p : python_files(tests / "slow")) {
    const std::string src = read_file(p);
    if (auto t = header(src, "task"); !t.empty())
      out.push_back({"correct_slow", t, fs::relative(p, root).string(), src});
  }
  for (const auto& p : python_files(tests / "fused")) {
    const std::string src = read_file(p);
    if (auto t = header(src, "task"); !t.empty())
      out.push_back({"correct_fast", t, fs::relative(p, root).string(), src});
  }
  out.insert(out.end(), broken.begin(), broken.end());
  std::vector<StudyEntry> hacks;
  for (const auto& p : python_files(tests / "hacks")) {
    const std::string src = read_file(p);
    const std::string t = header(src, "task");
    std::string expect = header(src, "expect");
    expect = expect.substr(0, expect.find('|'));
    if (!t.empty() && !expect.empty()) hacks.push_back({"hack:" + expect, t, fs::relative(p, root).string(), src});
  }
  std::stable_sort(hacks.begin(), hacks.end(), [](const auto& a, const auto& b) { return a.family < b.family; });
  out.insert(out.end(), hacks.begin(), hacks.end());
  return out;
}

StudyResult run_reward_study(RewardScorer& scorer, const std::vector<StudyEntry>& catalogue, int seeds,
                             const std::function<void(const std::string&)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  StudyResult s;
  for (const auto& p : reward_presets()) s.presets.emplace_back(p.name);
  std::map<std::string, std::vector<double>> per_preset;
  std::vector<double> quality;
  for (const auto& e : catalogue) {
    RewardRequest req;
    req.task_id = e.task_id;
    req.submission.kernel_code = e.source;
    req.seeds = seeds;
    auto r = scorer.score(req);
    StudyRow row{e, r ? std::move(*r) : RewardResult::failure(r.error()), 0};
    if (progress) progress(fmt::format("{} {} {}", e.family, e.kernel, row.result.status));
    if (row.result.status == "error") {
      s.unexpected.push_back(fmt::format("{} ({}): not scored: {}", e.kernel, e.family,
                                         row.result.error ? row.result.error->message : "unknown"));
      continue;
    }
    const auto& c = row.result.components;
    if (is_correct_family(e.family) && c.correct == 0)
      s.unexpected.push_back(
          fmt::format("{} ({}): failed verification: {}", e.kernel, e.family, row.result.verify.value("message", "")));
    if (!is_correct_family(e.family) && c.correct == 1)
      s.unexpected.push_back(fmt::format("{} ({}): passed verification", e.kernel, e.family));
    row.quality = is_correct_family(e.family) && c.correct == 1 ? 1 + c.speedup.value_or(1.0) : 0.0;
    if (std::find(s.families.begin(), s.families.end(), e.family) == s.families.end()) s.families.push_back(e.family);
    ++s.count[e.family];
    for (const auto& p : s.presets) {
      const double v = row.result.scores.count(p) ? row.result.scores.at(p) : 0.0;
      s.mean[e.family][p] += v;
      per_preset[p].push_back(v);
    }
    quality.push_back(row.quality);
    s.rows.push_back(std::move(row));
  }
  for (auto& [family, m] : s.mean)
    for (auto& [p, v] : m) v /= s.count[family];
  for (const auto& p : s.presets) s.spearman[p] = spearman(per_preset[p], quality);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

nlohmann::json StudyResult::to_json() const {
  nlohmann::json rows_j = nlohmann::json::array();
  for (const auto& r : rows)
    rows_j.push_back({{"family", r.entry.family},
                      {"task", r.entry.task_id},
                      {"kernel", r.entry.kernel},
                      {"quality", r.quality},
                      {"scores", r.result.scores},
                      {"components", components_to_json(r.result.components)},
                      {"flags", r.result.flags}});
  return {{"families", families}, {"presets", presets}, {"count", count},           {"mean", mean},
          {"spearman", spearman}, {"rows", rows_j},     {"unexpected", unexpected}, {"seconds", seconds}};
}

std::string StudyResult::markdown() const {
  std::string out = "| family | kernels |";
  std::string rule = "|---|---:|";
  for (const auto& p : presets) {
    out += " " + p + " |";
    rule += "---:|";
  }
  out += "\n" + rule + "\n";
  for (const auto& f : families) {
    out += fmt::format("| {} | {} |", f, count.at(f));
    for (const auto& p : presets) out += fmt::format(" {:.2f} |", mean.at(f).at(p));
    out += "\n";
  }
  out += "| **Spearman vs quality** | |";
  for (const auto& p : presets) out += fmt::format(" {:.2f} |", spearman.at(p));
  out += "\n";
  return out;
}

}  // namespace nki_agent
