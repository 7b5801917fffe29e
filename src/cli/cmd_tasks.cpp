// `nki-agent tasks list|show|check|suites`: the tasks under a folder (or of a named suite), one
// task's contract (with its PyTorch reference, what a model is given to write a kernel), whether
// tasks are sound — their baseline passes, their reference is deterministic and not degenerate
// (docs/tasks.md) — and the named suites.
#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "cli/cli.h"
#include "runtime/kernel_service.h"
#include "tasks/suite.h"
#include "tasks/task.h"
#include "tasks/task_check.h"
#include "tasks/task_dirs.h"

namespace nki_agent::cli {

namespace {

struct TasksOptions {
  std::string root;
  std::string suite;
  std::vector<std::string> tasks;
  bool all = false;
  bool reference_only = false;  // check: the task's reference side only (no baseline run)
  bool no_source = false;
  std::string cache;
  int seeds = 0;
  int workers = 0;
};

std::string root_of(const TasksOptions& o) {
  return o.root.empty() ? default_task_root() : o.root;
}

// Every task folder under the root, or the suite's when one is named.
Result<std::vector<std::string>> selected_dirs(const TasksOptions& o) {
  const std::string root = root_of(o);
  if (o.suite.empty()) return find_task_dirs(root);
  auto suite = load_suite(root, o.suite);
  if (!suite) return fail(suite.error());
  return suite_task_dirs(*suite, root);
}

nlohmann::json arg_json(const TaskArg& a) {
  nlohmann::json j = {{"name", a.name},
                      {"kind", a.kind == ArgKind::kInput ? "input" : "param"},
                      {"dtype", std::string(dtype_name(a.dtype))},
                      {"torch_dtype", a.torch_dtype},
                      {"shape", a.shape},
                      {"dist", std::string(dist_name(a.dist))}};
  if (a.low) j["low"] = *a.low;
  if (a.high) j["high"] = *a.high;
  return j;
}

nlohmann::json task_json(const Task& t, bool with_source) {
  nlohmann::json j = {{"id", t.id},
                      {"name", t.name},
                      {"level", t.level},
                      {"category", t.category},
                      {"operation", t.operation},
                      {"entry", t.entry},
                      {"target", t.target},
                      {"dir", t.dir},
                      {"dialects", t.dialects},
                      {"baseline", t.baseline_path()},
                      {"hash", t.hash}};
  j["args"] = nlohmann::json::array();
  for (const auto& a : t.args) j["args"].push_back(arg_json(a));
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : t.outputs)
    j["outputs"].push_back({{"dtype", std::string(dtype_name(o.dtype))}, {"shape", o.shape}});
  j["tolerance"] = nlohmann::json::object();
  for (const auto& [d, tol] : t.tolerance)
    j["tolerance"][std::string(dtype_name(d))] = {{"atol", tol.atol}, {"rtol", tol.rtol}, {"norm_rtol", tol.norm_rtol}};
  j["variants"] = nlohmann::json::array();
  for (const auto& v : t.variants) {
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [k, s] : v.args) args[k] = s;
    j["variants"].push_back({{"name", v.name}, {"args", args}, {"outputs", v.outputs}});
  }
  j["cost"] = {{"flops", t.flops}, {"bytes", t.bytes}};
  nlohmann::json profiles = nlohmann::json::array();
  for (auto p : t.profiles) profiles.push_back(std::string(profile_name(p)));
  j["verify"] = {{"seeds", t.seeds}, {"profiles", profiles}, {"large_scale", t.large_scale}};
  nlohmann::json forbidden = nlohmann::json::array();
  for (auto d : t.forbidden_dtypes()) forbidden.push_back(std::string(dtype_name(d)));
  j["policy"] = {{"precision", t.strict_precision ? "strict" : "any"}, {"forbidden_dtypes", forbidden}};
  if (!t.reference_task_id.empty() || t.expected_speedup || !t.engine_hints.empty() || !t.tile_suggestions.empty()) {
    nlohmann::json ref = {
        {"task_id", t.reference_task_id}, {"engine_hints", t.engine_hints}, {"tile_suggestions", t.tile_suggestions}};
    if (t.expected_speedup) ref["expected_speedup"] = {t.expected_speedup->first, t.expected_speedup->second};
    j["reference"] = std::move(ref);
  }
  if (!t.warnings.empty()) j["warnings"] = t.warnings;
  if (with_source) j["task_py"] = t.task_py;
  return j;
}

int run_list(const Context& ctx, const TasksOptions& o) {
  const std::string root = root_of(o);
  auto dirs = selected_dirs(o);
  if (!dirs) return report(ctx, dirs.error());
  nlohmann::json list = nlohmann::json::array();
  int broken = 0;
  for (const auto& d : *dirs) {
    auto t = load_task(d);
    if (!t) {
      ++broken;
      list.push_back({{"dir", d}, {"error", t.error().to_json()}});
      if (!ctx.json)
        fmt::print("{:<8} {:<36} (broken: {})\n", "?", std::filesystem::path(d).filename().string(), t.error().message);
      continue;
    }
    int params = 0;
    for (const auto& a : t->args) params += a.kind == ArgKind::kParam;
    std::string inputs;
    for (const auto& a : t->args)
      if (a.kind == ArgKind::kInput)
        inputs += fmt::format("{}{}:{}{}", inputs.empty() ? "" : " ", a.name, dtype_name(a.dtype), shape_str(a.shape));
    list.push_back({{"id", t->id},
                    {"name", t->name},
                    {"level", t->level},
                    {"category", t->category},
                    {"dir", d},
                    {"params", params},
                    {"variants", t->variants.size()}});
    if (!ctx.json)
      fmt::print("{:<8} {:<32} {:<16} {} params={} variants={}\n", t->id, t->name, t->category, inputs, params,
                 t->variants.size());
  }
  if (!ctx.json)
    fmt::print("{} task(s) {}{}\n", dirs->size(), o.suite.empty() ? "under " + root : "in suite " + o.suite,
               broken ? fmt::format(", {} broken", broken) : "");
  nlohmann::json j = {{"root", root}, {"tasks", list}};
  if (!o.suite.empty()) j["suite"] = o.suite;
  emit_json(ctx, j);
  return broken ? kExitUserError : kExitOk;
}

int run_show(const Context& ctx, const TasksOptions& o) {
  if (o.tasks.size() != 1)
    return report(
        ctx, Diagnostic::error("nkia_bad_argument", "tasks show takes one task", "e.g. nki-agent tasks show L1_014"));
  auto dir = resolve_task_dir(o.tasks[0], root_of(o));
  if (!dir) return report(ctx, dir.error());
  auto t = load_task(*dir);
  if (!t) return report(ctx, t.error());
  if (ctx.json) {
    emit_json(ctx, {{"task", task_json(*t, !o.no_source)}});
    return kExitOk;
  }
  fmt::print("{} {} (level {}, {}): {}\n", t->id, t->name, t->level, t->category, t->operation);
  fmt::print("folder   {}\nentry    {}  (target {}, dialects {})\n", t->dir, t->entry, t->target,
             t->dialects.empty() ? std::string("any") : fmt::format("{}", fmt::join(t->dialects, ", ")));
  fmt::print("arguments, in order:\n");
  for (const auto& a : t->args)
    fmt::print("  {:<20} {:<6} {:<9} {:<18} {}{}\n", a.name, a.kind == ArgKind::kInput ? "input" : "param",
               dtype_name(a.dtype), shape_str(a.shape), dist_name(a.dist),
               a.torch_dtype != dtype_name(a.dtype) ? fmt::format(" (reference: {})", a.torch_dtype) : "");
  fmt::print("outputs:\n");
  for (size_t k = 0; k < t->outputs.size(); ++k) {
    const auto& out = t->outputs[k];
    const auto& tol = t->tolerance_for(out.dtype);
    fmt::print("  out{}  {:<9} {:<18} atol={:g} rtol={:g}\n", k, dtype_name(out.dtype), shape_str(out.shape), tol.atol,
               tol.rtol);
  }
  for (const auto& v : t->variants) {
    std::string args;
    for (const auto& [k, s] : v.args) args += fmt::format("{}{}={}", args.empty() ? "" : ", ", k, shape_str(s));
    std::string outs;
    for (const auto& s : v.outputs) outs += (outs.empty() ? "" : ", ") + shape_str(s);
    fmt::print("variant  {}: {} -> {}\n", v.name, args, outs);
  }
  std::string profiles;
  for (auto p : t->profiles) profiles += (profiles.empty() ? "" : ", ") + std::string(profile_name(p));
  fmt::print("verify   {} seeds, inputs: {}\n", t->seeds, profiles);
  std::string forbidden;
  for (auto d : t->forbidden_dtypes()) forbidden += (forbidden.empty() ? "" : ", ") + std::string(dtype_name(d));
  if (!forbidden.empty()) fmt::print("policy   the kernel may not use {}\n", forbidden);
  if (t->flops > 0 || t->bytes > 0) fmt::print("cost     {:g} FLOPs, {:g} bytes (prompt shapes)\n", t->flops, t->bytes);
  if (!t->reference_task_id.empty() || t->expected_speedup || !t->engine_hints.empty()) {
    std::string tiles;
    for (const auto& [k, v] : t->tile_suggestions) tiles += fmt::format("{}{}={}", tiles.empty() ? "" : ", ", k, v);
    fmt::print("upstream {}{}{}{}\n", t->reference_task_id.empty() ? "-" : t->reference_task_id,
               t->expected_speedup ? fmt::format(", expected speedup {:g}-{:g}x", t->expected_speedup->first,
                                                 t->expected_speedup->second)
                                   : "",
               t->engine_hints.empty() ? "" : fmt::format(", engines {}", fmt::join(t->engine_hints, ", ")),
               tiles.empty() ? "" : ", tiles " + tiles);
  }
  for (const auto& w : t->warnings) fmt::print("warning  {}\n", w);
  if (!o.no_source) fmt::print("\n# task.py\n{}", t->task_py);
  return kExitOk;
}

int run_check(const Context& ctx, const TasksOptions& o) {
  const std::string root = root_of(o);
  std::vector<std::string> dirs;
  if (o.all || !o.suite.empty()) {
    auto found = selected_dirs(o);
    if (!found) return report(ctx, found.error());
    dirs = *found;
  }
  for (const auto& spec : o.tasks) {
    auto d = resolve_task_dir(spec, root);
    if (!d) return report(ctx, d.error());
    dirs.push_back(*d);
  }
  if (dirs.empty())
    return report(ctx,
                  Diagnostic::error("nkia_bad_argument", "no task to check", "name tasks, or give --all or --suite"));
  KernelServiceOptions so;
  so.workers =
      o.workers > 0 ? o.workers : std::max(1, std::min(static_cast<int>(std::thread::hardware_concurrency()), 8));
  auto service = KernelService::create(so);
  if (!service) return report(ctx, service.error());
  TaskCheckOptions co;
  co.verify.reference.cache_dir = o.cache;
  co.verify.seeds = o.seeds;
  co.verify.fail_fast = true;
  co.baseline = !o.reference_only;
  nlohmann::json results = nlohmann::json::array();
  int bad = 0;
  for (const auto& d : dirs) {
    auto t = load_task(d);
    if (!t) {
      ++bad;
      results.push_back({{"dir", d}, {"passed", false}, {"error", t.error().to_json()}});
      if (!ctx.json) fmt::print(stderr, "BAD   {}\n  {}\n", d, t.error().format());
      continue;
    }
    auto r = check_task(*t, **service, co);
    if (!r) return report(ctx, r.error());
    bad += !r->passed;
    results.push_back(r->to_json());
    if (!ctx.json) std::fputs(r->format().c_str(), stdout);  // a result, sound or not
  }
  if (ctx.json) {
    nlohmann::json j = {{"ok", bad == 0}, {"checked", dirs.size()}, {"failed", bad}, {"tasks", results}};
    print_json(j);
  } else {
    fmt::print("{} task(s) checked, {} with problems\n", dirs.size(), bad);
  }
  return bad ? kExitUserError : kExitOk;
}

int run_suites(const Context& ctx, const TasksOptions& o) {
  const std::string root = root_of(o);
  nlohmann::json list = nlohmann::json::array();
  int bad = 0;
  for (const auto& name : suite_names(root)) {
    auto s = load_suite(root, name);
    if (!s) {
      ++bad;
      list.push_back({{"name", name}, {"error", s.error().to_json()}});
      if (!ctx.json) fmt::print("{:<16} (broken: {})\n", name, s.error().message);
      continue;
    }
    auto dirs = suite_task_dirs(*s, root);
    nlohmann::json j = {{"name", name}, {"description", s->description}, {"inferred", s->inferred}};
    if (dirs)
      j["tasks"] = dirs->size();
    else
      j["missing"] = dirs.error().message;
    list.push_back(j);
    if (!ctx.json)
      fmt::print("{:<16} {:>4} {}{}\n", name, dirs ? std::to_string(dirs->size()) : std::string("?"),
                 s->inferred ? "(inferred) " : "", dirs ? s->description : dirs.error().message);
  }
  if (!ctx.json && list.empty()) fmt::print("no suites under {}/suites\n", root);
  emit_json(ctx, {{"root", root}, {"suites", list}});
  return bad ? kExitUserError : kExitOk;
}

}  // namespace

void add_tasks_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<TasksOptions>();
  auto* tasks = app.add_subcommand("tasks", "List, show and check NKIBench tasks");
  tasks->require_subcommand(1);
  tasks->add_option("--root", o->root, "Folder of tasks (default: $NKIA_TASKS, ./tasks/nkibench, ./tasks)");

  auto* list = tasks->add_subcommand("list", "Every task under the root: id, name, category, input shapes");
  list->add_option("--suite", o->suite, "Only the tasks of this suite (tasks suites lists them)");
  list->callback([&ctx, o] { ctx.exit_code = run_list(ctx, *o); });

  auto* show =
      tasks->add_subcommand("show", "One task's contract (arguments, outputs, tolerances, shapes) and task.py");
  show->add_option("task", o->tasks, "The task: its folder or id")->required();
  show->add_flag("--no-source", o->no_source, "Leave out task.py");
  show->callback([&ctx, o] { ctx.exit_code = run_show(ctx, *o); });

  auto* check = tasks->add_subcommand(
      "check", "Is a task sound: toml matches task.py, baseline passes, reference deterministic and not degenerate");
  check->add_option("task", o->tasks, "Tasks: folders or ids");
  check->add_flag("--all", o->all, "Every task under the root");
  check->add_option("--suite", o->suite, "Every task of this suite");
  check->add_option("--cache", o->cache, "Reference cache folder");
  check->add_flag("--reference-only", o->reference_only,
                  "Check the reference side only: the contract, determinism and degenerate outputs, no baseline run "
                  "(tasks without a baseline, e.g. much of a generated corpus)");
  check->add_option("--seeds", o->seeds, "Seeds for the baseline run (default: the task's)")->check(CLI::Range(1, 64));
  check->add_option("--workers", o->workers, "Kernel workers")->check(CLI::Range(1, 64));
  check->callback([&ctx, o] { ctx.exit_code = run_check(ctx, *o); });

  auto* suites = tasks->add_subcommand("suites", "The named task lists under the root's suites/ folder");
  suites->callback([&ctx, o] { ctx.exit_code = run_suites(ctx, *o); });
}

}  // namespace nki_agent::cli
