// The execution filters (corpus/filters.h).
#include "corpus/filters.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "core/thread_pool.h"
#include "tasks/helpers.h"
#include "tasks/subprocess.h"

namespace nki_agent::corpus {

namespace {

// One helper process over one batch: its answer's "tasks" object and peak RSS.
Result<nlohmann::json> run_batch(const std::vector<FilterTask>& tasks, size_t from, size_t to,
                                 const FilterOptions& opt) {
  nlohmann::json req;
  req["seed"] = opt.seed;
  req["runtime_band_s"] = opt.runtime_band_s;
  req["memory_band_mib"] = opt.memory_band_mib;
  req["tasks"] = nlohmann::json::array();
  for (size_t i = from; i < to; ++i) {
    nlohmann::json t;
    t["id"] = tasks[i].id;
    t["task_py"] = tasks[i].task_py;
    t["atol"] = tasks[i].atol;
    t["int_high"] = nlohmann::json::object();
    for (const auto& [pos, high] : tasks[i].int_high) t["int_high"][std::to_string(pos)] = high;
    req["tasks"].push_back(std::move(t));
  }
  ProcessLimits lim;
  lim.wall_seconds = 120 + 10.0 * double(to - from) * std::max(1.0, opt.runtime_band_s);
  lim.cpu_seconds = lim.wall_seconds;
  lim.address_space_bytes = int64_t{16} << 30;
  lim.max_file_bytes = 0;
  lim.max_output_bytes = 16 << 20;
  auto r =
      run_process(helper_argv(helper_python(opt.python), "corpus_filter.py"), helper_environment(1), req.dump(), lim);
  if (!r) {
    Diagnostic d = r.error();
    d.message = "the corpus filters could not run: " + d.message;
    return fail(std::move(d));
  }
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  if (r->exit_status != 0 || j.is_discarded() || !j.is_object() || !j.contains("tasks")) {
    Diagnostic d = Diagnostic::error("nkia_helper_died",
                                     fmt::format("the corpus filter helper failed (exit status {})", r->exit_status),
                                     "it needs Debian's python3.11 with PyTorch (scripts/install-deps.sh)");
    if (!r->err_tail.empty())
      d.with_note(r->err_tail.substr(r->err_tail.size() > 2000 ? r->err_tail.size() - 2000 : 0));
    return fail(std::move(d));
  }
  return j;
}

}  // namespace

const std::vector<std::string>& filter_check_names() {
  static const std::vector<std::string> kNames = {"runs",      "deterministic", "finite",  "not_constant",
                                                  "sensitive", "magnitude",     "runtime", "memory"};
  return kNames;
}

Result<FilterRun> run_filters(const std::vector<FilterTask>& tasks, const FilterOptions& options) {
  FilterRun run;
  run.verdicts.resize(tasks.size());
  if (tasks.empty()) return run;
  const size_t batch = size_t(std::max(1, options.batch));
  struct Job {
    size_t from, to;
    std::future<Result<nlohmann::json>> first, second;
  };
  std::vector<Job> jobs;
  {
    // Two processes per batch (the determinism check), `jobs` batches at once.
    ThreadPool pool(unsigned(std::max(1, options.jobs) * 2));
    for (size_t from = 0; from < tasks.size(); from += batch) {
      const size_t to = std::min(tasks.size(), from + batch);
      Job j{from, to, {}, {}};
      j.first = pool.submit([&, from, to] { return run_batch(tasks, from, to, options); });
      j.second = pool.submit([&, from, to] { return run_batch(tasks, from, to, options); });
      jobs.push_back(std::move(j));
    }
    for (Job& j : jobs) {
      auto a = j.first.get();
      auto b = j.second.get();
      if (!a) return fail(a.error());
      if (!b) return fail(b.error());
      run.peak_rss_mib =
          std::max({run.peak_rss_mib, a->value("peak_rss_mib", int64_t{0}), b->value("peak_rss_mib", int64_t{0})});
      for (size_t i = j.from; i < j.to; ++i) {
        const nlohmann::json& ta = (*a)["tasks"][tasks[i].id];
        const nlohmann::json& tb = (*b)["tasks"][tasks[i].id];
        FilterVerdict v;
        v.checks = nlohmann::json::object();
        for (const std::string& name : filter_check_names()) {
          if (name == "deterministic") {
            const bool ran = ta["checks"].value("runs", "") == "pass" && tb["checks"].value("runs", "") == "pass";
            v.checks[name] = !ran ? "skipped"
                             : ta.value("hash", "") == tb.value("hash", "")
                                 ? "pass"
                                 : "the outputs differ between two processes";
          } else {
            v.checks[name] = ta["checks"].value(name, "skipped");
          }
        }
        for (const std::string& name : filter_check_names()) {
          const std::string s = v.checks[name].get<std::string>();
          if (s != "pass") {
            v.failed = name;
            break;
          }
        }
        v.passed = v.failed.empty();
        run.verdicts[i] = std::move(v);
      }
    }
  }
  return run;
}

}  // namespace nki_agent::corpus
