// `nki-agent solve`, `bench`, `prompt` and `export-sft`: the agent on one task, over a benchmark,
// the prompts it sends, and its trajectories as SFT data.
//
//   solve --task T --model M [--single-shot] [--max-turns N] [--optimize-turns K]
//         progress on stderr, the best kernel to --out, every turn to the trajectory (JSONL)
//   bench --tasks DIR [--suite NAME] [--only ID...] [--model M] [--jobs J] [--resume]
//         tasks in parallel into SQLite, a progress bar and a summary per level; with no model,
//         every task's baseline through the same pipeline; exits 1 when a task could not be run
//         or was interrupted (the model endpoint failed): --resume runs those again;
//         --samples K episodes per task, --shard I/N a 1/N share of the tasks
//   bench merge A.sqlite B.sqlite ... -o all.sqlite   the shards' databases as one run
// Model settings: --model names a [models.NAME] table of the config file (--config, $NKIA_CONFIG,
// ~/.config/nki-agent/config.toml) or is the model id itself; NKIA_LLM_* variables and the flags
// override it; the API key comes from the environment only. SIGINT stops gracefully: the current
// model call is cancelled, finished results are kept, and `bench --resume` continues.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/bench.h"
#include "agent/bench_merge.h"
#include "agent/llm_config.h"
#include "agent/loop.h"
#include "agent/sft.h"
#include "agent/store.h"
#include "cli/cli.h"
#include "core/clock.h"
#include "report/pass_at_k.h"
#include "tasks/speed_cost.h"
#include "tasks/task_dirs.h"

namespace nki_agent::cli {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_cancel{false};
extern "C" void on_sigint(int) {
  g_cancel.store(true);
}

void install_sigint() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::optional<std::string> env_lookup(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

struct ModelFlags {
  std::string model, strong_model, config;
  std::string provider, base_url;
  double temperature = -1;
  int max_tokens = 0;
  bool no_stream = false;
  double timeout = 0;
  int escalate_after = 2;
};

void add_model_flags(CLI::App* sub, ModelFlags& m) {
  sub->add_option("--config", m.config,
                  "Model configuration file (TOML; default $NKIA_CONFIG, "
                  "~/.config/nki-agent/config.toml)");
  sub->add_option("--provider", m.provider, "openai (chat completions) or anthropic (messages)")
      ->check(CLI::IsMember({"openai", "anthropic"}));
  sub->add_option("--base-url", m.base_url, "The endpoint, e.g. http://127.0.0.1:8000/v1");
  sub->add_option("--temperature", m.temperature, "Sampling temperature")->check(CLI::Range(0.0, 2.0));
  sub->add_option("--max-tokens", m.max_tokens, "Most tokens per reply")->check(CLI::Range(1, 1 << 20));
  sub->add_flag("--no-stream", m.no_stream, "Ask for whole replies instead of streams");
  sub->add_option("--request-timeout", m.timeout, "Seconds per model request, retries included")
      ->check(CLI::Range(1.0, 86400.0));
  sub->add_option("--strong-model", m.strong_model, "A stronger model to escalate to after failed turns");
  sub->add_option("--escalate-after", m.escalate_after, "Failed turns before escalating to --strong-model")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
}

Result<LlmConfig> model_config(const std::string& name, const ModelFlags& m) {
  LlmOverrides ov;
  if (!m.provider.empty()) ov.provider = m.provider;
  if (!m.base_url.empty()) ov.base_url = m.base_url;
  if (m.temperature >= 0) ov.temperature = m.temperature;
  if (m.max_tokens > 0) ov.max_tokens = m.max_tokens;
  if (m.no_stream) ov.stream = false;
  if (m.timeout > 0) ov.timeout_s = m.timeout;
  return load_llm_config(name, m.config, env_lookup, ov);
}

struct AgentRunFlags {
  int max_turns = 10;
  int optimize_turns = 0;
  bool single_shot = false;
  std::string dialect = "legacy";
  std::string prompt_version = "v1";
  uint64_t seed = 0;
  std::string cache;
  double timeout = kDefaultKernelSeconds;
};

void add_run_flags(CLI::App* sub, AgentRunFlags& r) {
  sub->add_option("--max-turns", r.max_turns, "Model turns to reach a passing kernel")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  sub->add_option("--optimize-turns", r.optimize_turns, "More turns after the first pass, to make it faster")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  sub->add_flag("--single-shot", r.single_shot, "One generation, no tools (the ablation)");
  sub->add_option("--dialect", r.dialect, "The NKI dialect asked for")
      ->capture_default_str()
      ->check(CLI::IsMember({"legacy", "current"}));
  sub->add_option("--prompt-version", r.prompt_version, "The prompts/ version")->capture_default_str();
  sub->add_option("--seed", r.seed, "Recorded in the trajectory; sent to servers that take a seed");
  sub->add_option("--cache", r.cache, "Reference cache folder (default: $XDG_CACHE_HOME/nki-agent/references)");
  sub->add_option("--kernel-timeout", r.timeout, "Wall-clock and CPU limit of one kernel run, in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
}

SolveOptions solve_options(const AgentRunFlags& r, const ModelFlags& m) {
  SolveOptions so;
  so.max_turns = r.max_turns;
  so.optimize_turns = r.optimize_turns;
  so.single_shot = r.single_shot;
  so.prompt.version = r.prompt_version;
  so.prompt.dialect = r.dialect;
  so.seed = r.seed;
  so.escalate_after = m.strong_model.empty() ? 0 : m.escalate_after;
  return so;
}

// ---- solve ----

struct SolveFlags {
  std::string task, root, out, trajectory;
  ModelFlags model;
  AgentRunFlags run;
  bool quiet = false;
  bool show_text = false;
};

int run_solve(const Context& ctx, const SolveFlags& f) {
  auto dir = resolve_task_dir(f.task, f.root.empty() ? default_task_root() : f.root);
  if (!dir) return report(ctx, dir.error());
  auto task = load_task(*dir);
  if (!task) return report(ctx, task.error());
  auto cfg = model_config(f.model.model, f.model);
  if (!cfg) return report(ctx, cfg.error());
  auto client = make_llm_client(*cfg);
  if (!client) return report(ctx, client.error());
  std::unique_ptr<LlmClient> strong;
  if (!f.model.strong_model.empty()) {
    auto scfg = model_config(f.model.strong_model, f.model);
    if (!scfg) return report(ctx, scfg.error());
    auto s = make_llm_client(*scfg);
    if (!s) return report(ctx, s.error());
    strong = std::move(*s);
  }
  KernelServiceOptions ko;
  ko.workers = std::max(1, std::min<int>(static_cast<int>(std::thread::hardware_concurrency()), 8));
  auto service = KernelService::create(ko);
  if (!service) return report(ctx, service.error());
  VerifyOptions vo;
  vo.reference.cache_dir = f.run.cache;
  vo.kernel_seconds = f.run.timeout;
  vo.speed = cost_speed_model();
  AgentTools tools(*task, **service, vo);

  const std::string traj_path =
      !f.trajectory.empty()
          ? f.trajectory
          : (fs::path("nki-agent-runs") / ("solve-" + task->label() + "-" + utc_timestamp(false) + ".jsonl")).string();
  auto traj = TrajectoryWriter::open(traj_path);
  if (!traj) return report(ctx, traj.error());
  SolveOptions so = solve_options(f.run, f.model);
  so.run_id = "solve-" + utc_timestamp(false);
  SolveHooks hooks;
  hooks.trajectory = traj->get();
  install_sigint();
  hooks.cancel = &g_cancel;
  if (!f.quiet) hooks.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  if (f.show_text)
    hooks.on_text = [](std::string_view delta) {
      std::fwrite(delta.data(), 1, delta.size(), stderr);
      std::fflush(stderr);
    };
  auto res = solve_task(*task, tools, **client, strong.get(), so, hooks);
  if (!res) return report(ctx, res.error());
  if (!f.out.empty() && !res->kernel.empty()) {
    std::ofstream out(f.out, std::ios::binary);
    out << res->kernel;
    if (!out) return report(ctx, Diagnostic::error("nkia_unwritable", "cannot write " + f.out));
  }
  if (ctx.json) {
    nlohmann::json j = res->to_json();
    j["trajectory"] = traj_path;
    if (!f.out.empty()) j["kernel_file"] = f.out;
    emit_json(ctx, j);
  } else {
    std::printf("%s: %s after %d turn%s, %d tool call%s", res->task.c_str(), res->status.c_str(), res->turns,
                res->turns == 1 ? "" : "s", res->tool_calls, res->tool_calls == 1 ? "" : "s");
    if (res->speedup > 0) std::printf(", speedup %.2fx", res->speedup);
    std::printf("\n  tokens %lld in / %lld out, cost $%.4f, %.1f s (model %.1f s, tools %.1f s)\n",
                static_cast<long long>(res->usage.input_tokens), static_cast<long long>(res->usage.output_tokens),
                res->cost_usd, res->seconds, res->model_seconds, res->tool_seconds);
    if (!res->error.empty()) std::printf("  stopped: %s\n", res->error.c_str());
    std::printf("  trajectory %s\n", traj_path.c_str());
    if (!f.out.empty() && !res->kernel.empty()) std::printf("  kernel %s\n", f.out.c_str());
  }
  return res->passed ? kExitOk : kExitUserError;
}

// ---- bench ----

struct BenchFlags {
  std::string tasks, suite, db, out, run_id, shard;
  std::vector<std::string> filter;
  int jobs = 1;
  int samples = 1;
  bool resume = false;
  int workers = 0;
  ModelFlags model;
  AgentRunFlags run;
};

// "I/N" with 0 <= I < N.
Result<std::pair<int, int>> parse_shard(const std::string& text) {
  int i = -1, n = 0;
  char slash = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d %c %d %c", &i, &slash, &n, &rest) != 3 || slash != '/' || n < 1 || i < 0 || i >= n)
    return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("--shard {}: not I/N", text),
                                            "give the job's 0-based index and the number of shards, 0 <= I < N: "
                                            "--shard 0/4 ... --shard 3/4 (e.g. --shard $SLURM_ARRAY_TASK_ID/4)"));
  return std::make_pair(i, n);
}

// pass@k of a run with several samples per task, for k = 1 .. K (report/pass_at_k.h), a line per group.
void print_pass_at_k(const std::string& db_path, const std::string& run_id) {
  auto store = ResultStore::open(db_path);
  if (!store) return;
  auto rows = (*store)->results(run_id);
  if (!rows) return;
  std::string group;
  for (const PassAtK& p : pass_at_k_table(*rows)) {
    if (p.group != group) {
      std::fputs(group.empty() ? "pass@k" : "\n", stdout);
      if (!group.empty()) std::fputs("pass@k", stdout);
      std::fprintf(stdout, " %s (%d tasks):", p.group.c_str(), p.tasks);
      group = p.group;
    }
    std::fprintf(stdout, " @%d %.3f", p.k, p.value);
  }
  if (!group.empty()) std::fputs("\n", stdout);
}

int run_bench_cmd(const Context& ctx, const BenchFlags& f) {
  BenchOptions bo;
  if (!f.shard.empty()) {
    auto sh = parse_shard(f.shard);
    if (!sh) return report(ctx, sh.error());
    bo.shard_index = sh->first;
    bo.shard_count = sh->second;
  }
  bo.samples = f.samples;
  bo.tasks_root = f.tasks.empty() ? default_task_root() : f.tasks;
  bo.filter = f.filter;
  bo.suite = f.suite;
  bo.jobs = f.jobs;
  bo.resume = f.resume;
  bo.run_id = f.run_id;
  bo.out_dir = f.out.empty() ? "nki-agent-runs" : f.out;
  bo.db_path = f.db.empty() ? (fs::path(bo.out_dir) / "bench.sqlite").string() : f.db;
  bo.kernel_workers = f.workers;
  bo.solve = solve_options(f.run, f.model);
  bo.verify.reference.cache_dir = f.run.cache;
  bo.verify.kernel_seconds = f.run.timeout;
  if (!f.model.model.empty()) {
    auto cfg = model_config(f.model.model, f.model);
    if (!cfg) return report(ctx, cfg.error());
    bo.model = *cfg;
    if (!f.model.strong_model.empty()) {
      auto scfg = model_config(f.model.strong_model, f.model);
      if (!scfg) return report(ctx, scfg.error());
      bo.stronger = *scfg;
    }
  }
  bo.progress_bar = !ctx.json && isatty(STDERR_FILENO);
  install_sigint();
  bo.cancel = &g_cancel;
  if (!bo.model && !ctx.json)
    std::fprintf(stderr,
                 "No model given: running every task's baseline kernel through the verification pipeline.\n"
                 "To benchmark the agent, name a model: --model NAME (an OpenAI-compatible or Anthropic endpoint; "
                 "--base-url, --provider, or a [models.NAME] table in ~/.config/nki-agent/config.toml; the key in "
                 "OPENAI_API_KEY / ANTHROPIC_API_KEY).\n");
  auto log = [&ctx](const std::string& line) {
    if (!ctx.json) std::fprintf(stderr, "%s\n", line.c_str());
  };
  auto summary = run_bench(bo, log);
  if (!summary) return report(ctx, summary.error());
  if (ctx.json)
    emit_json(ctx, summary->to_json());
  else
    std::fputs(summary->format().c_str(), stdout);
  if (!ctx.json && bo.samples > 1) print_pass_at_k(summary->db_path, summary->run_id);
  if (g_cancel.load()) {
    std::fprintf(stderr, "interrupted: finished tasks are saved; rerun with --resume to continue\n");
    return kExitUserError;
  }
  // Interrupted tasks leave the benchmark unfinished: the same exit as a stop.
  return summary->errors.empty() && summary->total.interrupted == 0 ? kExitOk : kExitUserError;
}

// ---- bench merge ----

struct MergeFlags {
  std::vector<std::string> inputs;
  std::string out, run_id;
};

int run_bench_merge(const Context& ctx, const MergeFlags& f) {
  MergeOptions mo;
  mo.inputs = f.inputs;
  mo.out = f.out;
  mo.run_id = f.run_id;
  auto m = merge_bench_databases(mo);
  if (!m) return report(ctx, m.error());
  if (ctx.json)
    emit_json(
        ctx,
        {{"out", m->out}, {"run_id", m->run_id}, {"runs", m->runs}, {"rows", m->rows}, {"duplicates", m->duplicates}});
  else
    std::printf("merged %d run%s into run %s of %s: %d rows%s\n", m->runs, m->runs == 1 ? "" : "s", m->run_id.c_str(),
                m->out.c_str(), m->rows,
                m->duplicates > 0 ? fmt::format(" ({} duplicate rows left out)", m->duplicates).c_str() : "");
  return kExitOk;
}

// ---- prompt ----

struct PromptFlags {
  std::string task, root, dialect = "legacy", version = "v1";
  bool single_shot = false;
  int max_turns = 10;
};

int run_prompt(const Context& ctx, const PromptFlags& f) {
  auto dir = resolve_task_dir(f.task, f.root.empty() ? default_task_root() : f.root);
  if (!dir) return report(ctx, dir.error());
  auto task = load_task(*dir);
  if (!task) return report(ctx, task.error());
  PromptOptions po;
  po.version = f.version;
  po.dialect = f.dialect;
  po.tools = !f.single_shot;
  po.max_turns = f.max_turns;
  auto p = build_prompt(*task, po);
  if (!p) return report(ctx, p.error());
  if (ctx.json) {
    emit_json(ctx, {{"version", p->version}, {"system", p->system}, {"user", p->user}});
  } else {
    std::printf("===== system (prompts/%s) =====\n%s\n===== user =====\n%s\n", p->version.c_str(), p->system.c_str(),
                p->user.c_str());
  }
  return kExitOk;
}

// ---- export-sft ----

struct SftFlags {
  std::vector<std::string> inputs;
  std::string out, run_id, tasks;
  bool passed_only = false, first_pass = false;
};

int run_export_sft(const Context& ctx, const SftFlags& f) {
  SftOptions so;
  so.passed_only = f.passed_only;
  so.stop_at_first_pass = f.first_pass;
  so.run_id = f.run_id;
  so.tasks_root = f.tasks;
  auto st = export_sft(f.inputs, f.out, so);
  if (!st) return report(ctx, st.error());
  if (ctx.json) {
    emit_json(ctx, {{"out", f.out},
                    {"files", st->files},
                    {"pairs", st->pairs},
                    {"written", st->written},
                    {"duplicates", st->duplicates},
                    {"skipped", st->skipped},
                    {"notes", st->notes}});
  } else {
    std::printf(
        "%d records written to %s from %d trajectories and %d (task, kernel) pairs (%d skipped, %d already "
        "there)\n",
        st->written, f.out.c_str(), st->trajectories, st->pairs, st->skipped, st->duplicates);
    for (const auto& n : st->notes) std::fprintf(stderr, "  skipped %s\n", n.c_str());
  }
  return kExitOk;
}

}  // namespace

void add_agent_commands(CLI::App& app, Context& ctx) {
  auto s = std::make_shared<SolveFlags>();
  auto* solve =
      app.add_subcommand("solve", "The agent on one task: an LLM writes, compiles, verifies and fixes a kernel");
  solve->add_option("--task,-t", s->task, "The task: its folder, or its id under --root")->required();
  solve->add_option("--root", s->root,
                    "Where task ids are looked up (default: $NKIA_TASKS, ./tasks/nkibench, ./tasks)");
  solve->add_option("--model,-m", s->model.model, "The model: a [models.NAME] of the config file, or a model id")
      ->required();
  solve->add_option("--out,-o", s->out, "Write the best kernel here");
  solve->add_option("--trajectory", s->trajectory, "The JSONL trajectory file (default: nki-agent-runs/solve-*.jsonl)");
  solve->add_flag("--quiet,-q", s->quiet, "No progress lines");
  solve->add_flag("--show-text", s->show_text, "Print the model's text on stderr as it streams");
  add_model_flags(solve, s->model);
  add_run_flags(solve, s->run);
  solve->callback([&ctx, s] { ctx.exit_code = run_solve(ctx, *s); });

  auto b = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand(
      "bench",
      "The agent over a benchmark (or, with no model, every task's baseline): results in SQLite, a summary "
      "per level");
  bench->add_option("--tasks", b->tasks, "The task folder (default: $NKIA_TASKS, ./tasks/nkibench, ./tasks)");
  bench->add_option("--suite", b->suite,
                    "Only the tasks of this suite (nkibench-150, nkibench-60, level1, level2, all)");
  bench->add_option("--only", b->filter, "Only these task ids or id prefixes (e.g. L1_0)");
  bench->add_option("--model,-m", b->model.model, "The model (none: the baselines)");
  bench->add_option("--jobs,-j", b->jobs, "Tasks in parallel")->capture_default_str()->check(CLI::Range(1, 256));
  bench->add_flag("--resume", b->resume, "Continue the last run with the same settings: only unfinished tasks");
  bench->add_option("--run", b->run_id, "Name of a new run (default: time and settings hash)");
  bench->add_option("--db", b->db, "The results database (default: <out>/bench.sqlite)");
  bench->add_option("--out", b->out, "Folder for the database and trajectories (default: nki-agent-runs)");
  bench->add_option("--workers", b->workers, "Kernel sandbox workers (default: one per core, at most 8)")
      ->check(CLI::Range(1, 64));
  bench
      ->add_option("--samples", b->samples,
                   "Independent episodes per task (sample k has seed --seed + k); the report gives pass@k")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  bench->add_option("--shard", b->shard,
                    "Run only shard I of N (0-based): the tasks whose index in the id-sorted list is I mod N; "
                    "join the shards' databases with bench merge");
  add_model_flags(bench, b->model);
  add_run_flags(bench, b->run);
  auto mf = std::make_shared<MergeFlags>();
  auto* merge = bench->add_subcommand(
      "merge", "Join the databases of a benchmark's shards (bench --shard I/N) into one run in a new database");
  merge->add_option("databases", mf->inputs, "The shards' databases")->required();
  merge->add_option("-o,--out", mf->out, "The merged database to write (must not exist)")->required();
  merge->add_option("--run", mf->run_id, "The merged run's id (default: the first input run's)");
  merge->callback([&ctx, mf] { ctx.exit_code = run_bench_merge(ctx, *mf); });
  bench->require_subcommand(0, 1);
  bench->callback([&ctx, b, merge] {
    if (merge->parsed()) return;  // bench merge ran instead
    ctx.exit_code = run_bench_cmd(ctx, *b);
  });

  auto p = std::make_shared<PromptFlags>();
  auto* prompt = app.add_subcommand("prompt", "Print the system and task prompts the agent sends for a task");
  prompt->add_option("--task,-t", p->task, "The task: its folder, or its id under --root")->required();
  prompt->add_option("--root", p->root, "Where task ids are looked up");
  prompt->add_option("--dialect", p->dialect, "legacy or current")->capture_default_str();
  prompt->add_option("--prompt-version", p->version, "The prompts/ version")->capture_default_str();
  prompt->add_flag("--single-shot", p->single_shot, "The single-shot prompt (no tools)");
  prompt->add_option("--max-turns", p->max_turns, "Turns the prompt announces")->capture_default_str();
  prompt->callback([&ctx, p] { ctx.exit_code = run_prompt(ctx, *p); });

  auto x = std::make_shared<SftFlags>();
  auto* sft = app.add_subcommand(
      "export-sft",
      "Agent trajectories (JSONL) and verified (task, kernel) pairs as chat-format SFT records, one per line");
  sft->add_option("inputs", x->inputs,
                  "Trajectory files or folders of them (searched recursively), and bench results databases "
                  "(.sqlite: their passing rows as (task, kernel) pairs)")
      ->required();
  sft->add_option("--run", x->run_id, "Of a results database, only this run's rows");
  sft->add_option("--tasks", x->tasks, "Where a database's tasks are (default: the run's own task root)");
  sft->add_option("--out,-o", x->out, "The JSONL file the records are appended to")->required();
  sft->add_flag("--passed-only", x->passed_only, "Only trajectories whose kernel passed");
  sft->add_flag("--first-pass", x->first_pass, "End each conversation at the turn that first passed");
  sft->callback([&ctx, x] { ctx.exit_code = run_export_sft(ctx, *x); });
}

}  // namespace nki_agent::cli
