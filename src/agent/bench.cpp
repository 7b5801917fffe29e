// agent/bench.cpp — tasks in parallel through the agent (or their baselines), rows into SQLite.
#include "agent/bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "agent/tools.h"
#include "agent/trajectory.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/version.h"
#include "tasks/baseline.h"
#include "tasks/speed_cost.h"
#include "tasks/suite.h"
#include "tasks/task_dirs.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

bool selected(const std::string& dir_name, const std::string& id, const std::vector<std::string>& filter) {
  if (filter.empty()) return true;
  for (const auto& f : filter)
    if (id == f || dir_name.rfind(f, 0) == 0 || id.rfind(f, 0) == 0) return true;
  return false;
}

void add_row(LevelSummary& s, const TaskRow& r, std::vector<double>& logs) {
  if (r.status == kStatusInterrupted) {
    ++s.interrupted;  // not a result: counted apart, in nothing else
    return;
  }
  if (r.status == "error") {
    ++s.broken;  // the task or the harness failed, not the kernel: counted apart too
    return;
  }
  ++s.tasks;
  if (r.compiled) ++s.compiled;
  if (r.passed) {
    ++s.passed;
    s.fast_0 += 1;
    if (r.speedup > 1.0) s.fast_1 += 1;
    if (r.speedup > 1.5) s.fast_1_5 += 1;
    if (r.speedup > 2.0) s.fast_2 += 1;
    if (r.speedup > 0) logs.push_back(std::log(r.speedup));
  }
  s.input_tokens += r.input_tokens;
  s.output_tokens += r.output_tokens;
  s.cost_usd += r.cost_usd;
  s.seconds += r.seconds;
}

void finish_level(LevelSummary& s, const std::vector<double>& logs) {
  if (s.tasks > 0) {
    s.fast_0 /= s.tasks;
    s.fast_1 /= s.tasks;
    s.fast_1_5 /= s.tasks;
    s.fast_2 /= s.tasks;
  }
  if (!logs.empty()) {
    double sum = 0;
    for (double l : logs) sum += l;
    s.geomean_speedup = std::exp(sum / static_cast<double>(logs.size()));
  }
}

}  // namespace

nlohmann::json LevelSummary::to_json() const {
  auto pct = [&](int n) { return tasks > 0 ? 100.0 * n / tasks : 0.0; };
  return {{"level", level},
          {"tasks", tasks},
          {"interrupted", interrupted},
          {"broken", broken},
          {"compiled", compiled},
          {"passed", passed},
          {"compile_percent", pct(compiled)},
          {"pass_percent", pct(passed)},
          {"fast_0", fast_0},
          {"fast_1", fast_1},
          {"fast_1.5", fast_1_5},
          {"fast_2", fast_2},
          {"geomean_speedup", geomean_speedup},
          {"input_tokens", input_tokens},
          {"output_tokens", output_tokens},
          {"cost_usd", cost_usd},
          {"seconds", seconds}};
}

std::string bench_run_key(const std::string& model_name, const std::string& tasks_root, const nlohmann::json& options) {
  return sha256_hex(model_name + "\n" + tasks_root + "\n" +
                    options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string episode_name(const std::string& task_label, int sample, int samples) {
  return samples > 1 ? fmt::format("{}.s{}", task_label, sample) : task_label;
}

BenchSummary summarize_rows(const std::vector<TaskRow>& rows) {
  BenchSummary b;
  std::map<int, std::pair<LevelSummary, std::vector<double>>> levels;
  std::vector<double> all_logs;
  b.total.level = -1;
  for (const auto& r : rows) {
    auto& [s, logs] = levels[r.level];
    s.level = r.level;
    add_row(s, r, logs);
    add_row(b.total, r, all_logs);
  }
  for (auto& [level, entry] : levels) {
    finish_level(entry.first, entry.second);
    b.levels.push_back(entry.first);
  }
  finish_level(b.total, all_logs);
  return b;
}

nlohmann::json BenchSummary::to_json() const {
  nlohmann::json lv = nlohmann::json::array();
  for (const auto& l : levels) lv.push_back(l.to_json());
  return {{"run_id", run_id},           {"model", model},  {"db", db_path},
          {"skipped", skipped},         {"levels", lv},    {"total", total.to_json()},
          {"interrupted", interrupted}, {"errors", errors}};
}

std::string BenchSummary::format() const {
  std::string s = fmt::format("run {} ({}), results in {}\n", run_id, model, db_path);
  s += fmt::format("{:<7} {:>5} {:>6} {:>9} {:>7} {:>7} {:>7} {:>8} {:>7} {:>9} {:>12} {:>9}\n", "level", "tasks",
                   "intr.", "compile%", "pass%", "fast_1", "fast1.5", "fast_2", "geomean", "tokens", "cost USD",
                   "task s");
  auto line = [&](const LevelSummary& l, const std::string& name) {
    auto pct = [&](int n) { return l.tasks > 0 ? 100.0 * n / l.tasks : 0.0; };
    s += fmt::format("{:<7} {:>5} {:>6} {:>9.1f} {:>7.1f} {:>7.2f} {:>7.2f} {:>8.2f} {:>7} {:>9} {:>12.4f} {:>9.1f}\n",
                     name, l.tasks, l.interrupted, pct(l.compiled), pct(l.passed), l.fast_1, l.fast_1_5, l.fast_2,
                     l.geomean_speedup > 0 ? fmt::format("{:.2f}x", l.geomean_speedup) : "-",
                     l.input_tokens + l.output_tokens, l.cost_usd, l.seconds);
  };
  for (const auto& l : levels) line(l, fmt::format("L{}", l.level));
  if (levels.size() != 1) line(total, "all");
  if (skipped > 0) s += fmt::format("({} tasks were already finished in this run and were not run again)\n", skipped);
  if (total.interrupted > 0)
    s += fmt::format(
        "{} task{} interrupted (the model endpoint failed or the run was stopped): not counted above; "
        "--resume runs {} again\n",
        total.interrupted, total.interrupted == 1 ? " was" : "s were", total.interrupted == 1 ? "it" : "them");
  if (total.broken > 0)
    s += fmt::format("{} broken task{} (the task or the harness failed, not a kernel): not counted above\n",
                     total.broken, total.broken == 1 ? "" : "s");
  for (const auto& i : interrupted) s += "interrupted: " + i + "\n";
  for (const auto& e : errors) s += "error: " + e + "\n";
  return s;
}

Result<BenchSummary> run_bench(const BenchOptions& o, const std::function<void(const std::string&)>& log) {
  auto say = [&](const std::string& line) {
    if (log) log(line);
  };
  Result<std::vector<std::string>> dirs = find_task_dirs(o.tasks_root);
  if (!o.suite.empty()) {
    auto suite = load_suite(o.tasks_root, o.suite);
    if (!suite) return fail(suite.error());
    dirs = suite_task_dirs(*suite, o.tasks_root);
  }
  if (!dirs) return fail(dirs.error());
  // The task list: ids come from the folders' task.toml (a broken task still gets a row).
  struct Item {
    std::string dir, id;
  };
  std::vector<Item> items;
  for (const auto& d : *dirs) {
    auto t = load_task(d);
    std::string id = t ? t->id : fs::path(d).filename().string();
    if (id.empty()) id = fs::path(d).filename().string();
    if (selected(fs::path(d).filename().string(), id, o.filter)) items.push_back({d, id});
  }
  if (items.empty()) return fail("nkia_task_not_found", "no task under " + o.tasks_root + " matches");
  if (o.shard_count > 1) {
    // The shard: every N-th task of the list sorted by id, from the I-th (0-based).
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.id < b.id; });
    std::vector<Item> mine;
    for (size_t i = 0; i < items.size(); ++i)
      if (static_cast<int>(i % static_cast<size_t>(o.shard_count)) == o.shard_index) mine.push_back(items[i]);
    say(fmt::format("shard {}/{}: {} of {} tasks", o.shard_index, o.shard_count, mine.size(), items.size()));
    items = std::move(mine);
    if (items.empty())
      return fail("nkia_task_not_found", fmt::format("shard {}/{} holds no task: there are fewer tasks than shards",
                                                     o.shard_index, o.shard_count));
  }
  const int samples = std::max(1, o.samples);
  // A model that cannot be reached at all (an invalid configuration, a public API without a key)
  // fails the benchmark before any task, instead of every task in turn.
  if (!o.client_factory)
    for (const auto* m : {&o.model, &o.stronger})
      if (*m)
        if (auto c = make_llm_client(**m); !c) return fail(std::move(c.error()));

  auto store = ResultStore::open(o.db_path);
  if (!store) return fail(store.error());

  const std::string model_name = o.model ? o.model->name : "baseline";
  nlohmann::json options = {{"max_turns", o.solve.max_turns},
                            {"optimize_turns", o.solve.optimize_turns},
                            {"single_shot", o.solve.single_shot},
                            {"prompt_version", o.solve.prompt.version},
                            {"dialect", o.solve.prompt.dialect},
                            {"escalate_after", o.solve.escalate_after},
                            {"seed", o.solve.seed},
                            {"filter", o.filter}};
  // Absent when unused, so that older runs keep their keys.
  if (!o.suite.empty()) options["suite"] = o.suite;
  if (o.samples > 1) options["samples"] = o.samples;
  if (o.shard_count > 1) options["shard"] = fmt::format("{}/{}", o.shard_index, o.shard_count);
  options["simulator_version"] = kVersion;
  if (o.model) options["model"] = o.model->to_json();
  if (o.stronger) options["stronger"] = o.stronger->to_json();
  std::error_code ec;
  const std::string root = fs::weakly_canonical(o.tasks_root, ec).string();
  const std::string key = bench_run_key(model_name, root, options);

  RunInfo run;
  std::set<std::pair<std::string, int>> done;
  if (o.resume) {
    auto found = (*store)->find_run(key);
    if (!found) return fail(found.error());
    if (*found) {
      run = **found;
      auto fin = (*store)->finished_episodes(run.run_id);
      if (!fin) return fail(fin.error());
      done = *fin;
      say(fmt::format("resuming run {}: {} of {} episodes already finished", run.run_id, done.size(),
                      items.size() * static_cast<size_t>(samples)));
    } else {
      say("no earlier run with these settings: starting a new one");
    }
  }
  if (run.run_id.empty()) {
    run.run_id = !o.run_id.empty() ? o.run_id : fmt::format("{}-{}", utc_timestamp(false), key.substr(0, 8));
    run.key = key;
    run.model = model_name;
    run.tasks_root = root;
    run.options = options;
    run.created = utc_timestamp(true);
    if (auto a = (*store)->add_run(run); !a) return fail(a.error());
  }

  struct Episode {
    const Item* item;
    int sample;
  };
  std::vector<Episode> todo;
  for (const auto& it : items)
    for (int k = 0; k < samples; ++k)
      if (!done.count({it.id, k})) todo.push_back({&it, k});

  KernelServiceOptions so;
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  so.workers = o.kernel_workers > 0 ? o.kernel_workers : std::min(hw, 8);
  auto service = KernelService::create(so);
  if (!service) return fail(service.error());

  VerifyOptions vo = o.verify;
  vo.speed = cost_speed_model();  // one baseline-time cache for the whole run

  BenchSummary summary;
  summary.run_id = run.run_id;
  summary.model = model_name;
  summary.db_path = o.db_path;
  summary.skipped = static_cast<int>(items.size() * static_cast<size_t>(samples) - todo.size());

  std::mutex mu;
  size_t next = 0, finished = 0, passed = 0;
  const auto t0 = Clock::now();
  const bool tty = o.progress_bar;
  auto draw = [&](const std::string& last) {
    // Called with mu held.
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (tty) {
      const int width = 30;
      const int filled = todo.empty() ? width : static_cast<int>(width * finished / todo.size());
      std::string bar(static_cast<size_t>(filled), '#');
      bar.resize(width, '.');
      std::fprintf(stderr, "\r[%s] %zu/%zu  passed %zu  %.0f s  %-40.40s", bar.c_str(), finished, todo.size(), passed,
                   secs, last.c_str());
      std::fflush(stderr);
    } else {
      say(fmt::format("[{}/{}] {} ({:.0f} s)", finished, todo.size(), last, secs));
    }
  };

  const fs::path kernels_dir = fs::path(o.out_dir) / "kernels" / run.run_id;
  auto run_one = [&](const Item& item, int sample) -> TaskRow {
    TaskRow row;
    row.run_id = run.run_id;
    row.task_id = item.id;
    row.sample = sample;
    row.seed = o.solve.seed + static_cast<uint64_t>(sample);
    row.task = fs::path(item.dir).filename().string();
    const auto start = Clock::now();
    auto broken = [&](const Diagnostic& d) {
      row.status = "error";
      row.outcome = kOutcomeBroken;
      row.code = d.code;
      row.error = d.format();
      row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return row;
    };
    auto task = load_task(item.dir);
    if (!task) return broken(task.error());
    row.task = task->label();
    row.level = task->level;
    row.category = task->category;
    AgentTools tools(*task, **service, vo);
    SolveResult res;
    if (!o.model) {
      // The baseline through the same pipeline.
      auto base = load_baseline_files(*task);
      if (!base) return broken(base.error());
      ToolResult tr = tools.verify(*base);
      if (tr.is_error && tr.data.contains("verifier_error"))  // the verifier could not run: not the kernel's fault
        return broken(Diagnostic::error(tr.data["verifier_error"].value("code", "nkia_internal"), tr.content));
      res.task = task->label();
      res.compiled = tr.compiled;
      res.passed = tr.passed;
      res.status = tr.passed ? "passed" : tr.is_error ? "error" : tr.compiled ? "compiled" : "failed";
      res.kernel = tr.kernel;
      res.verify = tr.verify;
      res.speedup = tr.passed && tr.verify && tr.verify->speed.available ? tr.verify->speed.speedup : 0;
      res.last_kernel = tr.kernel;
      res.tool_calls = 1;
      res.tool_seconds = tr.seconds;
      res.outcome = tr.passed ? kOutcomePassed : tr.compiled ? kOutcomeFailedCheck : kOutcomeCompileError;
      if (!tr.passed && tr.verify) {
        res.check = tr.verify->check;
        if (tr.verify->diagnostic) res.code = tr.verify->diagnostic->code;
      }
      if (!tr.passed) res.error = tr.content.substr(0, 2000);
    } else {
      auto make = [&](const LlmConfig& c) {
        return o.client_factory ? o.client_factory(c, *task) : make_llm_client(c);
      };
      auto client = make(*o.model);
      std::unique_ptr<LlmClient> strong;
      if (client && o.stronger) {
        auto s = make(*o.stronger);
        if (s) strong = std::move(*s);
      }
      if (!client) return broken(client.error());
      row.trajectory =
          (fs::path(o.out_dir) / run.run_id / (episode_name(task->label(), sample, samples) + ".jsonl")).string();
      auto traj = TrajectoryWriter::open(row.trajectory, /*truncate=*/true);
      SolveOptions so2 = o.solve;
      so2.run_id = run.run_id;
      so2.seed = row.seed;
      SolveHooks hooks;
      if (traj) hooks.trajectory = traj->get();
      hooks.cancel = o.cancel;
      auto r = solve_task(*task, tools, **client, strong.get(), so2, hooks);
      if (!r) return broken(r.error());
      res = std::move(*r);
    }
    row.status = res.status;
    row.compiled = res.compiled;
    row.passed = res.passed;
    row.speedup = res.speedup;
    row.turns = res.turns;
    row.tool_calls = res.tool_calls;
    row.input_tokens = res.usage.input_tokens;
    row.output_tokens = res.usage.output_tokens;
    row.cost_usd = res.cost_usd;
    row.error = res.error;
    row.kernel = res.kernel;
    row.outcome = res.outcome;
    row.check = res.check;
    row.code = res.code;
    row.model_seconds = res.model_seconds;
    row.tool_seconds = res.tool_seconds;
    if (res.passed && res.verify && res.verify->speed.available) row.roofline = res.verify->speed.roofline_fraction;
    const std::string name = episode_name(task->label(), sample, samples);
    auto keep = [&](const std::string& source, const char* suffix, std::string& path) {
      if (source.empty()) return;
      const fs::path file = kernels_dir / (name + suffix);
      std::error_code dir_ec;
      fs::create_directories(kernels_dir, dir_ec);
      std::ofstream f(file, std::ios::binary);
      f << source;
      f.close();
      if (f)
        path = file.string();
      else
        NKIA_LOG_WARN("bench: cannot write {}", file.string());
    };
    keep(res.kernel, ".best.py", row.best_kernel_path);
    keep(res.last_kernel, ".last.py", row.last_kernel_path);
    row.result = res.to_json();
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return row;
  };

  auto worker = [&]() {
    while (true) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= todo.size() || (o.cancel && o.cancel->load())) return;
        i = next++;
      }
      // An episode cut short by the endpoint or by SIGINT comes back "interrupted": stored as such,
      // counted apart, and run again by --resume.
      const Item& item = *todo[i].item;
      NKIA_LOG_INFO("bench: task {} sample {} begins", item.id.empty() ? item.dir : item.id, todo[i].sample);
      TaskRow row = run_one(item, todo[i].sample);
      NKIA_LOG_INFO("bench: task {} ends {} in {:.3f} s", row.task, row.status, row.seconds);
      auto added = (*store)->add_result(row);
      std::lock_guard<std::mutex> lock(mu);
      if (!added) summary.errors.push_back(added.error().message);
      ++finished;
      if (row.passed && row.status != kStatusInterrupted) ++passed;
      draw(fmt::format("{} {}{}", row.task, row.status, row.speedup > 0 ? fmt::format(" {:.2f}x", row.speedup) : ""));
    }
  };
  const int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(std::max<size_t>(todo.size(), 1))));
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (tty) std::fprintf(stderr, "\n");

  auto rows = (*store)->results(run.run_id);
  if (!rows) return fail(rows.error());
  BenchSummary full = summarize_rows(*rows);
  full.run_id = summary.run_id;
  full.model = summary.model;
  full.db_path = summary.db_path;
  full.skipped = summary.skipped;
  full.errors = summary.errors;
  for (const auto& r : *rows) {
    const std::string who = r.sample > 0 ? fmt::format("{} (sample {})", r.task_id, r.sample) : r.task_id;
    if (r.status == "error" && !r.error.empty()) full.errors.push_back(who + ": " + r.error.substr(0, 300));
    if (r.status == kStatusInterrupted) full.interrupted.push_back(who + ": " + r.error.substr(0, 300));
  }
  return full;
}

}  // namespace nki_agent
