// `nki-agent verify --task T kernel.py`: is a candidate kernel correct for a task (several seeds,
// input distributions and shapes against the cached PyTorch reference, behind a static policy),
// and how fast is it? Exit 0 when it passes, 1 when it fails — the result on stdout either way,
// with the failed check, its numbers and a hint, and the failure's Diagnostic on stderr (or all
// of it in the JSON) — 3 for nki-agent's own faults. A kernel verified before, unchanged and the
// same way, is answered from the result cache (tasks/verify_cache.h). docs/tasks.md.
#include <fmt/format.h>

#include <thread>

#include "cli/cli.h"
#include "core/hash.h"
#include "core/log.h"
#include "runtime/kernel_service.h"
#include "tasks/speed_cost.h"
#include "tasks/task.h"
#include "tasks/task_dirs.h"
#include "tasks/verify.h"
#include "tasks/verify_cache.h"

namespace nki_agent::cli {

namespace {

struct VerifyCliOptions {
  std::string task;
  std::string kernel;
  std::string root;
  int seeds = 0;
  uint64_t seed_base = 0;
  std::vector<std::string> shapes;
  std::string cache;
  bool no_cache = false;
  bool no_result_cache = false;
  bool no_policy = false;
  bool all_cases = false;
  bool no_speed = false;
  std::string hardware;  // a hardware description for the speed figures instead of the task target's
  int workers = 0;
  double timeout = kDefaultKernelSeconds;
  int64_t memory_mib = kDefaultKernelMemoryMiB;
};

// A verification run here and now: kernel workers, references, cases.
Result<VerifyResult> verify_fresh(const Task& task, const KernelFiles& files, const VerifyOptions& vo,
                                  const VerifyCliOptions& o) {
  const int cases = (o.seeds > 0 ? o.seeds : task.seeds) * static_cast<int>(task.variants.size() + 1);
  KernelServiceOptions so;
  so.workers = o.workers > 0
                   ? o.workers
                   : std::max(1, std::min<int>({static_cast<int>(std::thread::hardware_concurrency()), 8, cases}));
  auto service = KernelService::create(so);
  if (!service) return fail(service.error());
  return verify_kernel(task, files, **service, vo);
}

int print_result(const Context& ctx, const VerifyResult& result) {
  if (ctx.json) {
    nlohmann::json j = {{"ok", result.passed}, {"verify", result.to_json()}};
    if (result.diagnostic) j["diagnostics"] = nlohmann::json::array({result.diagnostic->to_json()});
    print_json(j);
  } else {
    // PASS or FAIL, the result goes to stdout; a failure's Diagnostic also goes to stderr.
    std::fputs(result.format().c_str(), stdout);
    if (result.diagnostic) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s\n", result.diagnostic->format().c_str());
    }
  }
  return result.passed ? kExitOk : kExitUserError;
}

int run_verify(const Context& ctx, const VerifyCliOptions& o) {
  auto dir = resolve_task_dir(o.task, o.root.empty() ? default_task_root() : o.root);
  if (!dir) return report(ctx, dir.error());
  auto task = load_task(*dir);
  if (!task) return report(ctx, task.error());
  auto files = load_kernel_files(o.kernel);
  if (!files) return report(ctx, files.error());

  VerifyOptions vo;
  vo.seeds = o.seeds;
  vo.seed_base = o.seed_base;
  vo.shape_sets = o.shapes;
  vo.kernel_seconds = o.timeout;
  vo.kernel_memory_mib = o.memory_mib;
  vo.static_policy = !o.no_policy;
  vo.fail_fast = !o.all_cases;
  vo.reference.cache_dir = o.cache;
  vo.reference.use_cache = !o.no_cache;
  if (!o.no_speed && !o.hardware.empty()) {
    auto text = read_hardware_file(o.hardware);
    if (!text) return report(ctx, text.error());
    auto hw = parse_hardware(*text, o.hardware);
    if (!hw) return report(ctx, hw.error());
    if (hw->target.name != task->target)
      return report(ctx, Diagnostic::error("nkia_bad_argument",
                                           fmt::format("--hardware {} describes {}, the task runs on {}", o.hardware,
                                                       hw->target.name, task->target),
                                           "give a description of the task's target (its [target] name)"));
    vo.speed = cost_speed_model(std::move(*hw));
    vo.speed.identity = "hardware:" + sha256_hex(*text);
  } else if (!o.no_speed) {
    vo.speed = cost_speed_model();
  }

  // The same kernel verified again the same way: its stored result, without starting a worker.
  // An empty key (the caches off, or nothing to key by) is never found and never stored.
  const VerifyResultCache results(result_cache_dir_for(o.cache));
  const std::string key = o.no_cache || o.no_result_cache ? "" : verify_result_key(*task, *files, vo);
  std::optional<VerifyResult> result = results.get(key);
  if (result) NKIA_LOG_DEBUG("verify {}: answered from the result cache {}", task->label(), results.dir());
  if (!result) {
    auto ran = verify_fresh(*task, *files, vo, o);
    if (!ran) return report(ctx, ran.error());
    result = std::move(*ran);
    results.put(key, *result, vo);
  }
  return print_result(ctx, *result);
}

}  // namespace

void add_verify_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<VerifyCliOptions>();
  auto* sub = app.add_subcommand("verify",
                                 "Check a kernel against a task: seeds x shapes x input distributions vs the "
                                 "PyTorch reference, plus a static policy");
  sub->add_option("--task,-t", o->task, "The task: its folder, or its id under --root (e.g. L1_014)")->required();
  sub->add_option("kernel", o->kernel, "The candidate kernel's .py file (defines the task's entry)")->required();
  sub->add_option("--root", o->root, "Where task ids are looked up (default: $NKIA_TASKS, ./tasks/nkibench, ./tasks)");
  sub->add_option("--seeds", o->seeds, "Seeds to run (default: the task's, 5)")->check(CLI::Range(1, 64));
  sub->add_option("--seed-base", o->seed_base, "First seed (seeds are base, base+1, ...)")->capture_default_str();
  sub->add_option("--shapes", o->shapes, "Only these shape sets: 'prompt' or variant names (default: all)");
  sub->add_option("--cache", o->cache, "Reference cache folder (default: $XDG_CACHE_HOME/nki-agent/references)");
  sub->add_flag("--no-cache", o->no_cache, "Recompute every reference and store nothing (no result cache either)");
  sub->add_flag("--no-result-cache", o->no_result_cache,
                "Run the verification even when this kernel was verified the same way before (results are kept "
                "in <cache>/results)");
  sub->add_flag("--no-policy", o->no_policy, "Skip the static policy (debugging the verifier only)");
  sub->add_flag("--all-cases", o->all_cases, "Run every case even after a failure");
  sub->add_flag("--no-speed", o->no_speed, "Skip the simulated speed against the baseline");
  sub->add_option("--hardware", o->hardware,
                  "A hardware description (.toml, e.g. from `nki-agent calibrate`) for the speed figures instead "
                  "of the task target's own");
  sub->add_option("--workers", o->workers, "Kernel workers (default: one per core, at most 8)")
      ->check(CLI::Range(1, 64));
  sub->add_option("--timeout", o->timeout, "Wall-clock and CPU limit of one kernel run, in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  sub->add_option("--memory-mib", o->memory_mib, "Address-space limit of one kernel run")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{256}, int64_t{1} << 20));
  sub->callback([&ctx, o] { ctx.exit_code = run_verify(ctx, *o); });
}

}  // namespace nki_agent::cli
