// `nki-agent reward`: one answer scored the way the reward service scores it (docs/rl.md), and
// `nki-agent reward --list`: the presets with their formulas.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "reward/flags.h"
#include "reward/score.h"
#include "reward/study.h"
#include "tasks/speed_cost.h"
#include "tasks/task_dirs.h"

namespace nki_agent::cli {

namespace {

struct RewardCliOptions {
  std::string task;
  std::string file;
  std::string root;
  std::string preset = std::string(kDefaultPreset);
  bool as_kernel = false;
  bool all_turns = false;
  int seeds = 0;
  std::string cache;
  bool no_speed = false;
  bool list = false;
  int workers = 0;
};

int list_presets(const Context& ctx) {
  if (ctx.json) {
    nlohmann::json presets = nlohmann::json::array(), flags = nlohmann::json::array();
    for (const auto& p : reward_presets())
      presets.push_back({{"name", p.name},
                         {"formula", p.formula},
                         {"floor", p.floor},
                         {"gamma", p.gamma ? nlohmann::json(*p.gamma) : nlohmann::json(nullptr)},
                         {"sees_flags", p.sees_flags}});
    for (const auto& f : reward_flags())
      flags.push_back({{"name", f.name}, {"meaning", f.meaning}, {"zeroes", f.zeroes}});
    print_json({{"ok", true}, {"presets", presets}, {"flags", flags}});
    return kExitOk;
  }
  for (const auto& p : reward_presets())
    std::printf("%-19s %s\n", std::string(p.name).c_str(), std::string(p.formula).c_str());
  return kExitOk;
}

int run_reward(const Context& ctx, const RewardCliOptions& o) {
  if (o.list) return list_presets(ctx);
  if (o.task.empty() || o.file.empty())
    return report(ctx, Diagnostic::error("nkia_bad_argument", "reward needs --task and a file",
                                         "nki-agent reward --task L1_001 response.txt (or --list)"));
  std::ifstream in(o.file, std::ios::binary);
  if (!in) return report(ctx, Diagnostic::error("nkia_kernel_unreadable", fmt::format("cannot read {}", o.file)));
  std::stringstream text;
  text << in.rdbuf();

  // The scorer names tasks by plain ids under its roots: the task's folder is found first and
  // served from its parent.
  auto dir = resolve_task_dir(o.task, o.root.empty() ? default_task_root() : o.root);
  if (!dir) return report(ctx, dir.error());
  const std::filesystem::path task_dir = std::filesystem::absolute(*dir);
  const std::string task = task_dir.filename().string();
  ScorerOptions so;
  so.task_roots = {task_dir.parent_path().string()};
  so.verify.reference.cache_dir = o.cache;
  if (!o.no_speed) so.verify.speed = cost_speed_model();
  so.kernel_workers = o.workers;
  auto scorer = RewardScorer::create(so);
  if (!scorer) return report(ctx, scorer.error());

  RewardRequest req;
  req.task_id = task;
  if (o.as_kernel)
    req.submission.kernel_code = text.str();
  else
    req.submission.response = text.str();
  req.preset = o.preset;
  req.all_turns = o.all_turns;
  req.seeds = o.seeds;
  req.speed = !o.no_speed;
  auto r = (*scorer)->score(req);
  if (!r) return report(ctx, r.error());
  if (ctx.json) {
    print_json(r->to_json());
  } else {
    std::printf("%s %s: %s = %s\n", r->status.c_str(), task.c_str(), r->preset.c_str(),
                r->score ? fmt::format("{:.4g}", *r->score).c_str() : "none");
    for (const auto& [name, s] : r->scores) std::printf("  %-19s %.4g\n", name.c_str(), s);
    const auto& c = r->components;
    std::printf("  components: format %g, compile %g, correct %g, speedup %s, coverage %.3g\n", c.format, c.compile,
                c.correct, c.speedup ? fmt::format("{:.3g}", *c.speedup).c_str() : "-", c.coverage);
    if (!r->flags.empty()) {
      std::string f;
      for (const auto& x : r->flags) f += (f.empty() ? "" : ", ") + x;
      std::printf("  flags: %s\n", f.c_str());
    }
    if (r->error) std::printf("  error: %s\n", r->error->format().c_str());
  }
  return r->status == "error" ? kExitInternal : kExitOk;
}

struct StudyCliOptions {
  std::string source = ".";
  int seeds = 0;
  std::string cache;
  int workers = 0;
  bool markdown = false;
};

int run_study(const Context& ctx, const StudyCliOptions& o) {
  auto catalogue = study_catalogue(o.source);
  if (!catalogue) return report(ctx, catalogue.error());
  const std::filesystem::path src(o.source);
  ScorerOptions so;
  so.task_roots = {(src / "tests" / "tasks").string(), (src / "tasks" / "nkibench").string()};
  so.verify.reference.cache_dir = o.cache;
  so.verify.speed = cost_speed_model();
  so.kernel_workers = o.workers;
  auto scorer = RewardScorer::create(so);
  if (!scorer) return report(ctx, scorer.error());
  const bool quiet = ctx.json || o.markdown;
  auto study = run_reward_study(**scorer, *catalogue, o.seeds, [&](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
  });
  if (ctx.json) {
    print_json(study.to_json());
  } else {
    std::fputs(study.markdown().c_str(), stdout);
    if (!o.markdown)
      std::printf("\n%zu kernels in %.0f s; quality: 0 for compile errors and hacks, 1 + speedup when correct\n",
                  study.rows.size(), study.seconds);
    for (const auto& u : study.unexpected) std::printf("unexpected: %s\n", u.c_str());
  }
  return study.unexpected.empty() ? kExitOk : kExitUserError;
}

}  // namespace

void add_reward_commands(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RewardCliOptions>();
  auto* sub = app.add_subcommand("reward", "Score a model's answer (or a kernel) for RL, under every reward preset");
  sub->add_option("--task,-t", o->task, "The task: its folder, or its id under --root");
  sub->add_option("file", o->file, "The model's response text (or, with --kernel, the kernel module)");
  sub->add_option("--root", o->root, "Where task ids are looked up (default: $NKIA_TASKS, ./tasks/nkibench, ./tasks)");
  sub->add_option("--preset", o->preset, "The preset of the headline score")->capture_default_str();
  sub->add_flag("--kernel", o->as_kernel, "The file is the kernel module itself, not a response");
  sub->add_flag("--all-turns", o->all_turns, "Score every kernel of the response; the score is the trajectory's");
  sub->add_option("--seeds", o->seeds, "Seeds per shape set (default: the task's)")->check(CLI::Range(1, 64));
  sub->add_option("--cache", o->cache, "Reference cache folder");
  sub->add_flag("--no-speed", o->no_speed, "Skip the simulated speed against the baseline");
  sub->add_option("--workers", o->workers, "Kernel workers")->check(CLI::Range(1, 64));
  sub->add_flag("--list", o->list, "List the presets and their formulas");
  sub->callback([&ctx, o] { ctx.exit_code = run_reward(ctx, *o); });

  auto so = std::make_shared<StudyCliOptions>();
  auto* study = app.add_subcommand(
      "reward-study",
      "Every reward preset over a labelled catalogue of kernels: mean reward per family, rank correlation");
  study->add_option("--source", so->source, "The repository root (its tests/tasks kernels)")->capture_default_str();
  study->add_option("--seeds", so->seeds, "Seeds per shape set (default: the tasks' own)")->check(CLI::Range(1, 64));
  study->add_option("--cache", so->cache, "Reference cache folder");
  study->add_option("--workers", so->workers, "Kernel workers")->check(CLI::Range(1, 64));
  study->add_flag("--markdown", so->markdown, "Only the table");
  study->callback([&ctx, so] { ctx.exit_code = run_study(ctx, *so); });
}

}  // namespace nki_agent::cli
