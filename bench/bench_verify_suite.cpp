// Verification over a whole suite, side by side with PyTorch (docs/perf.md, "Verification at RL
// speed").
//
// For every task of the suite, the baseline kernel is verified with the same kernel workers:
//   cold  the references are computed (the reference worker starts, PyTorch builds each seed's model
//         and runs every case's forward) and stored in the cache;
//   warm  the same verification again, as an RL step or a benchmark sees it: references from the
//         cache, generated inputs from the process's input cache, workers warm. With --warm-runs N it
//         runs N times and the median counts (the spread of one machine's runs; a profile of warm
//         verifications alone; an RL step's steady state: a worker keeps the inputs it was sent,
//         so the first warm run still reads some that only the other worker holds). The first
//         warm run's figures are printed beside the medians, and every run's seconds are in the
//         JSON (warm_runs_s).
// PyTorch's time is the reference worker's own measure during the cold run: building the models,
// drawing their parameters and the forwards, one thread (no interpreter start, no file traffic).
// The figure of merit is warm ÷ PyTorch: what a verification costs next to computing the same
// references once.
//
//   ./build/bench/bench_verify_suite [--suite level1] [--root tasks/nkibench] [--only L1_01]...
//       [--cache DIR] [--workers 2] [--warm-runs 1] [--json FILE]
//
// Without --cache the references go to a new temporary folder (removed at the end), so every task
// is cold the first time. NKIA_LOG=debug prints each verification's timeline. Exit status 1 when
// a baseline does not pass.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/log.h"
#include "runtime/kernel_service.h"
#include "tasks/baseline.h"
#include "tasks/suite.h"
#include "tasks/task.h"
#include "tasks/verify.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string root = std::string(NKIA_SOURCE_DIR) + "/tasks/nkibench";
  std::string suite = "level1";
  std::vector<std::string> only;
  std::string cache;
  std::string json;
  int workers = 2;
  int warm_runs = 1;
};

struct Row {
  std::string task;
  int cases = 0;
  double cold = 0, warm = 0, torch = 0;
  std::vector<double> warm_runs;  // each warm run's seconds, in order (warm is their median)
  bool passed = false;
  std::string error;
};

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t folder_bytes(const fs::path& dir) {
  int64_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) n += static_cast<int64_t>(it->file_size(ec));
  return n;
}

double peak_rss_mib(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--suite" && (v = value()))
      o.suite = v;
    else if (a == "--root" && (v = value()))
      o.root = v;
    else if (a == "--only" && (v = value()))
      o.only.emplace_back(v);
    else if (a == "--cache" && (v = value()))
      o.cache = v;
    else if (a == "--json" && (v = value()))
      o.json = v;
    else if (a == "--workers" && (v = value()))
      o.workers = std::max(1, std::atoi(v));
    else if (a == "--warm-runs" && (v = value()))
      o.warm_runs = std::max(1, std::atoi(v));
    else {
      std::fprintf(stderr,
                   "usage: bench_verify_suite [--suite NAME] [--root DIR] [--only PREFIX]... [--cache DIR] "
                   "[--workers N] [--warm-runs N] [--json FILE]\n");
      return false;
    }
  }
  return true;
}

bool wanted(const Options& o, const std::string& id) {
  if (o.only.empty()) return true;
  return std::any_of(o.only.begin(), o.only.end(), [&](const std::string& p) { return id.rfind(p, 0) == 0; });
}

Row measure(const std::string& dir, KernelService& service, const VerifyOptions& vo, int warm_runs) {
  Row row;
  row.task = fs::path(dir).filename().string();
  auto task = load_task(dir);
  if (!task) {
    row.error = task.error().message;
    return row;
  }
  row.task = task->label();
  auto files = load_baseline_files(*task);
  if (!files) {
    row.error = files.error().message;
    return row;
  }
  auto cold = verify_kernel(*task, *files, service, vo);
  if (!cold || !cold->passed) {
    row.error = cold ? cold->message : cold.error().message;
    return row;
  }
  std::vector<double> warm_seconds;
  for (int i = 0; i < warm_runs; ++i) {
    auto warm = verify_kernel(*task, *files, service, vo);
    if (!warm || !warm->passed) {
      row.error = warm ? warm->message : warm.error().message;
      return row;
    }
    if (warm->reference.computed > 0) row.error = "the warm run computed references: the cache did not hold them";
    row.cases = warm->cases_total;
    warm_seconds.push_back(warm->seconds);
  }
  row.passed = true;
  row.cold = cold->seconds;
  row.warm = median(warm_seconds);
  row.warm_runs = std::move(warm_seconds);
  row.torch = cold->reference.compute_seconds;
  return row;
}

int run(const Options& o) {
  auto suite = load_suite(o.root, o.suite);
  if (!suite) {
    std::fprintf(stderr, "%s\n", suite.error().message.c_str());
    return 2;
  }
  auto dirs = suite_task_dirs(*suite, o.root);
  if (!dirs) {
    std::fprintf(stderr, "%s\n", dirs.error().message.c_str());
    return 2;
  }
  KernelServiceOptions so;
  so.workers = o.workers;
  so.worker_path = NKIA_WORKER_BIN;
  auto service = KernelService::create(so);
  if (!service) {
    std::fprintf(stderr, "%s\n", service.error().message.c_str());
    return 2;
  }
  const bool temp_cache = o.cache.empty();
  const fs::path cache =
      temp_cache ? fs::temp_directory_path() / fmt::format("nkia-bench-verify-{}", ::getpid()) : fs::path(o.cache);
  VerifyOptions vo;
  vo.reference.cache_dir = cache.string();

  std::vector<Row> rows;
  fmt::print("{:<32} {:>5} {:>9} {:>9} {:>9} {:>7}\n", "task", "cases", "cold s", "warm s", "torch s", "ratio");
  for (const std::string& dir : *dirs) {
    const std::string id = fs::path(dir).filename().string();
    if (!wanted(o, id)) continue;
    Row r = measure(dir, **service, vo, o.warm_runs);
    if (r.error.empty())
      fmt::print("{:<32} {:>5} {:>9.3f} {:>9.3f} {:>9.3f} {:>7.2f}\n", r.task, r.cases, r.cold, r.warm, r.torch,
                 r.torch > 0 ? r.warm / r.torch : 0.0);
    else
      fmt::print("{:<32} FAILED: {}\n", r.task, r.error);
    std::fflush(stdout);
    rows.push_back(std::move(r));
  }

  std::vector<double> warm, first_warm, ratio, first_ratio;
  int failed = 0;
  for (const Row& r : rows) {
    if (!r.error.empty()) {
      ++failed;
      continue;
    }
    warm.push_back(r.warm);
    first_warm.push_back(r.warm_runs.front());
    if (r.torch > 0) {
      ratio.push_back(r.warm / r.torch);
      first_ratio.push_back(r.warm_runs.front() / r.torch);
    }
  }
  std::sort(warm.begin(), warm.end());
  std::sort(first_warm.begin(), first_warm.end());
  const int64_t cache_bytes = folder_bytes(cache);
  nlohmann::json summary = {{"suite", o.suite},
                            {"tasks", rows.size()},
                            {"failed", failed},
                            {"warm_p50_s", percentile(warm, 50)},
                            {"warm_p95_s", percentile(warm, 95)},
                            {"warm_max_s", warm.empty() ? 0.0 : warm.back()},
                            {"ratio_median", median(ratio)},
                            {"ratio_max", ratio.empty() ? 0.0 : *std::max_element(ratio.begin(), ratio.end())},
                            {"cache_bytes", cache_bytes},
                            {"first_warm_p50_s", percentile(first_warm, 50)},
                            {"first_warm_p95_s", percentile(first_warm, 95)},
                            {"first_warm_max_s", first_warm.empty() ? 0.0 : first_warm.back()},
                            {"first_ratio_median", median(first_ratio)},
                            {"peak_rss_mib_self", peak_rss_mib(RUSAGE_SELF)}};
  fmt::print(
      "\n{} tasks, {} failed. warm verify p50 {:.3f} s, p95 {:.3f} s, max {:.3f} s; warm / PyTorch median "
      "{:.2f}x (max {:.2f}x); reference cache {:.1f} MiB; peak RSS of this process {:.0f} MiB\n",
      rows.size(), failed, summary["warm_p50_s"].get<double>(), summary["warm_p95_s"].get<double>(),
      summary["warm_max_s"].get<double>(), summary["ratio_median"].get<double>(), summary["ratio_max"].get<double>(),
      static_cast<double>(cache_bytes) / (1 << 20), summary["peak_rss_mib_self"].get<double>());
  if (o.warm_runs > 1)
    fmt::print("the first warm run of each task alone: p50 {:.3f} s, p95 {:.3f} s, max {:.3f} s; median {:.2f}x\n",
               summary["first_warm_p50_s"].get<double>(), summary["first_warm_p95_s"].get<double>(),
               summary["first_warm_max_s"].get<double>(), summary["first_ratio_median"].get<double>());
  if (!o.json.empty()) {
    nlohmann::json j = {{"summary", summary}, {"tasks", nlohmann::json::array()}};
    for (const Row& r : rows)
      j["tasks"].push_back({{"task", r.task},
                            {"cases", r.cases},
                            {"cold_s", r.cold},
                            {"warm_s", r.warm},
                            {"warm_runs_s", r.warm_runs},
                            {"torch_s", r.torch},
                            {"error", r.error}});
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  if (temp_cache) {
    std::error_code ec;
    fs::remove_all(cache, ec);
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace nki_agent

int main(int argc, char** argv) {
  nki_agent::Options o;
  if (!nki_agent::parse(argc, argv, o)) return 2;
  nki_agent::init_logging();  // NKIA_LOG=debug: each verification's timeline
  return nki_agent::run(o);
}
