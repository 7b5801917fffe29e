// reward/score.cpp — extract, verify (once per distinct kernel), components and flags, presets.
#include "reward/score.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "core/hash.h"
#include "core/version.h"
#include "reward/flags.h"
#include "tasks/baseline.h"
#include "tasks/task_dirs.h"

namespace nki_agent {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Diagnostic bad_request(std::string message, std::string hint = "") {
  return Diagnostic::error("nkia_reward_bad_request", std::move(message), std::move(hint));
}

// A task is named by a plain id, never a path: a client must not make the server read folders of
// its choosing.
bool plain_task_name(const std::string& id) {
  if (id.empty() || id.size() > 200 || id[0] == '.') return false;
  return std::all_of(id.begin(), id.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0 || c == '_' || c == '-' || c == '.'; });
}

// The compact verification record a reward carries (the full one is `nki-agent verify --json`'s).
nlohmann::json verify_summary(const VerifyResult& v) {
  nlohmann::json j = {{"passed", v.passed},
                      {"check", v.check},
                      {"message", v.message},
                      {"cases_run", v.cases_run},
                      {"cases_passed", v.cases_passed},
                      {"cases_total", v.cases_total},
                      {"speed", v.speed.to_json()}};
  if (v.diagnostic) j["diagnostic"] = v.diagnostic->to_json();
  return j;
}

}  // namespace

RewardScorer::RewardScorer(ScorerOptions options, std::unique_ptr<KernelService> service)
    : opt_(std::move(options)), service_(std::move(service)), cache_(opt_.cache_entries) {}

Result<std::unique_ptr<RewardScorer>> RewardScorer::create(ScorerOptions options) {
  if (options.task_roots.empty()) options.task_roots.push_back(default_task_root());
  KernelServiceOptions so;
  so.workers = options.kernel_workers > 0
                   ? options.kernel_workers
                   : std::max(1, std::min<int>(static_cast<int>(std::thread::hardware_concurrency()), 8));
  so.worker_path = options.worker_path;
  auto service = KernelService::create(so);
  if (!service) return tl::unexpected(service.error());
  return std::unique_ptr<RewardScorer>(new RewardScorer(std::move(options), std::move(*service)));
}

int64_t RewardScorer::worker_restarts() const {
  return service_->pool().workers_started() - service_->pool().size();
}

int RewardScorer::kernel_workers() const {
  return service_->pool().size();
}

size_t RewardScorer::tasks_loaded() const {
  std::lock_guard lock(mu_);
  return tasks_.size();
}

void RewardScorer::index_tasks() {
  // Under mu_. Every task folder of every root, by folder name and by the id and label of its
  // task.toml: a lookup never touches a path a client chose, and an unknown id costs a map miss
  // (the roots are indexed again on a miss at most every kReindexSeconds, so tasks added to a
  // root are found).
  index_.clear();
  for (const auto& root : opt_.task_roots) {
    auto dirs = find_task_dirs(root);
    if (!dirs) continue;
    for (const auto& d : *dirs) {
      index_[std::filesystem::path(d).filename().string()].insert(d);
      if (auto t = load_task(d)) {
        if (!t->id.empty()) index_[t->id].insert(d);
        // The reference implementation's name for it (L2_conv_fusions_001), which its clients send.
        if (!t->reference_task_id.empty()) index_[t->reference_task_id].insert(d);
        index_[t->label()].insert(d);
      }
    }
  }
  indexed_at_ = std::chrono::steady_clock::now();
  indexed_ = true;
}

Result<std::string> RewardScorer::find_dir(const std::string& id) {
  // Under mu_.
  auto lookup = [&]() -> std::set<std::string> {
    auto hit = index_.find(id);
    if (hit != index_.end()) return hit->second;
    // "L1_014" names L1_014_softmax_fp32 when exactly one folder starts so.
    std::set<std::string> prefixed;
    for (auto p = index_.lower_bound(id + "_"); p != index_.end() && p->first.rfind(id + "_", 0) == 0; ++p)
      prefixed.insert(p->second.begin(), p->second.end());
    return prefixed;
  };
  if (!indexed_) index_tasks();
  std::set<std::string> dirs = lookup();
  if (dirs.empty() && seconds_since(indexed_at_) > kReindexSeconds) {
    index_tasks();
    dirs = lookup();
  }
  if (dirs.size() > 1)
    return tl::unexpected(
        Diagnostic::error("nkia_task_ambiguous",
                          fmt::format("'{}' names {} tasks under the server's roots", id.substr(0, 200), dirs.size()),
                          "name the task by its folder name"));
  if (dirs.empty())
    return tl::unexpected(Diagnostic::error(
        "nkia_task_not_found", fmt::format("no task '{}' under the server's task roots", id.substr(0, 200)),
        "name a task by its id (L1_014), id_name or folder name; GET /health lists the roots"));
  return *dirs.begin();
}

size_t RewardScorer::tasks_indexed() {
  std::lock_guard lock(mu_);
  if (!indexed_) index_tasks();
  std::set<std::string> dirs;
  for (const auto& [name, d] : index_) dirs.insert(d.begin(), d.end());
  return dirs.size();
}

Result<RewardScorer::LoadedTask> RewardScorer::load(const std::string& id) {
  std::string dir;
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(id);
    if (it != tasks_.end()) return it->second;
    if (!plain_task_name(id))
      return tl::unexpected(Diagnostic::error("nkia_task_not_found",
                                              fmt::format("'{}' is not a task id", id.substr(0, 200)),
                                              "name a task by its id (L1_014) or folder name, never by a path"));
    auto found = find_dir(id);
    if (!found) return tl::unexpected(found.error());
    dir = *found;
  }
  auto task = load_task(dir);
  if (!task) return tl::unexpected(task.error());
  LoadedTask loaded;
  auto baseline = load_baseline_files(*task);
  loaded.baseline_digest = baseline ? kernel_files_digest(*baseline) : std::string();
  loaded.task = std::make_shared<const Task>(std::move(*task));
  std::lock_guard lock(mu_);
  return tasks_.emplace(id, std::move(loaded)).first->second;
}

Result<RewardScorer::LoadedTask> RewardScorer::load_inline(const InlineReference& ref) {
  if (!opt_.inline_references)
    return tl::unexpected(Diagnostic::error(
        "nkia_serve_inline_reference",
        "the request carries its own reference; this server scores kernels only against the tasks in its roots",
        "name a task the server holds with task_id (GET /health lists the roots)"));
  const std::string key = inline_reference_key(ref);
  {
    std::lock_guard lock(mu_);
    if (auto it = inline_tasks_.find(key); it != inline_tasks_.end()) return it->second;
  }
  InlineTaskOptions io = opt_.inline_tasks;
  io.reference.python = opt_.verify.reference.python;
  auto made = make_inline_task(ref, io);
  Result<LoadedTask> loaded = tl::unexpected(Diagnostic());
  if (made) {
    LoadedTask t;
    t.task = std::make_shared<const Task>(std::move(*made));
    loaded = std::move(t);
  } else {
    Diagnostic d = made.error();
    // The client's reference raised (or the confined worker refused what it did): the client's
    // fault, answered as a bad request.
    if (d.code == "nkia_reference_failed") d.code = "nkia_inline_reference";
    loaded = tl::unexpected(std::move(d));
  }
  // A failure of the machine (a worker that could not start) is not remembered.
  if (!loaded && loaded.error().code != "nkia_inline_reference") return loaded;
  std::lock_guard lock(mu_);
  if (inline_tasks_.size() >= kMaxInlineTasks) inline_tasks_.clear();
  return inline_tasks_.emplace(key, std::move(loaded)).first->second;
}

Result<std::shared_ptr<const Task>> RewardScorer::task(const std::string& id) {
  auto t = load(id);
  if (!t) return tl::unexpected(t.error());
  return t->task;
}

KernelScore RewardScorer::score_kernel(const Task& task, const std::string& baseline_digest, const std::string& source,
                                       const RewardRequest& request) {
  Hasher h;
  h.field(kVersion).field(task.hash).field(baseline_digest).field(source);
  h.field(request.seeds).field(request.speed ? 1 : 0);
  const std::string key = to_hex(h.finish());
  if (auto hit = cache_.get(key)) {
    hit->cached = true;
    hit->verify_seconds = 0;  // nothing was verified for this request
    return *hit;
  }
  // A GRPO group often holds identical completions, which arrive together: the first verifies, the
  // others wait for its result instead of verifying the same kernel again.
  std::promise<KernelScore> promise;
  {
    std::unique_lock lock(in_flight_mu_);
    auto it = in_flight_.find(key);
    if (it != in_flight_.end()) {
      std::shared_future<KernelScore> pending = it->second;
      lock.unlock();
      KernelScore shared = pending.get();
      shared.cached = shared.scored;
      shared.verify_seconds = 0;
      return shared;
    }
    in_flight_.emplace(key, promise.get_future().share());
  }
  KernelScore ks = verify_for_reward(task, source, request, key);
  promise.set_value(ks);
  std::lock_guard lock(in_flight_mu_);
  in_flight_.erase(key);
  return ks;
}

KernelScore RewardScorer::verify_for_reward(const Task& task, const std::string& source, const RewardRequest& request,
                                            const std::string& key) {
  ++verifications_;
  KernelScore ks;
  VerifyOptions vo = opt_.verify;
  vo.seeds = request.seeds;
  if (!request.speed) vo.speed = SpeedModel{};
  const auto t0 = std::chrono::steady_clock::now();
  auto v = verify_kernel(task, kernel_files_from_source(source, "kernel.py"), *service_, vo);
  ks.verify_seconds = seconds_since(t0);
  if (!v) {
    // Not the kernel's fault and possibly transient (a reference worker that died): not cached.
    ks.error = v.error();
    return ks;
  }
  ks.scored = true;
  RewardComponents& c = ks.components;
  c.format = 1;
  c.correct = v->passed ? 1 : 0;
  if (v->passed) {
    c.compile = 1;
  } else if (v->check == "static_policy") {
    // The policy stops a verification before any case runs; whether the kernel compiles is still
    // what binary_compile pays for.
    AgentTools tools(task, *service_, vo);
    c.compile = tools.compile(source).compiled ? 1 : 0;
  } else {
    // The prompt's first case runs alone first: a kernel_error there is a kernel that does not
    // build at the task's shapes.
    c.compile = !v->cases.empty() && v->cases[0].check == "kernel_error" ? 0 : 1;
  }
  if (v->passed && v->speed.available) {
    c.speedup = v->speed.speedup;
    c.coverage = std::clamp(v->speed.roofline_fraction, 0.0, 1.0);
  }
  ks.flags = flags_of(*v);
  ks.verify = verify_summary(*v);
  cache_.put(key, ks);
  return ks;
}

Result<RewardResult> RewardScorer::score(const RewardRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  const RewardPreset* main = find_preset(request.preset);
  if (!main)
    return tl::unexpected(bad_request(fmt::format("unknown preset '{}'", request.preset.substr(0, 100)),
                                      "GET /health lists the presets"));
  std::vector<const RewardPreset*> presets;
  if (request.presets.empty()) {
    for (const auto& p : reward_presets()) presets.push_back(&p);
  } else {
    for (const auto& name : request.presets) {
      const RewardPreset* p = find_preset(name);
      if (!p) return tl::unexpected(bad_request(fmt::format("unknown preset '{}'", name.substr(0, 100))));
      if (std::find(presets.begin(), presets.end(), p) == presets.end()) presets.push_back(p);
    }
    if (std::find(presets.begin(), presets.end(), main) == presets.end()) presets.push_back(main);
  }
  if (request.gamma && !(*request.gamma >= 0 && *request.gamma <= 1))
    return tl::unexpected(bad_request("gamma must be between 0 and 1"));
  if (request.seeds < 0 || request.seeds > 64) return tl::unexpected(bad_request("seeds must be between 1 and 64"));
  auto loaded = request.inline_reference ? load_inline(*request.inline_reference) : load(request.task_id);
  if (!loaded) return tl::unexpected(loaded.error());
  const Task& task = *loaded->task;

  RewardResult r;
  r.preset = main->name;
  const ExtractedKernels ex = extract_kernels(request.submission, task.entry);
  r.extracted_from = ex.source;
  RewardContext ctx;
  if (task.expected_speedup) ctx.optimized_speedup = task.expected_speedup->first;

  if (ex.kernels.empty()) {
    r.status = "format_error";
    for (const auto* p : presets) r.scores[std::string(p->name)] = preset_score(*p, r.components, ctx, false);
    r.score = r.scores[std::string(main->name)];
    r.verify = {{"passed", false},
                {"check", "format"},
                {"message", ex.source == "response"
                                ? fmt::format("no ```python block defining {}() was found in the response", task.entry)
                                : "the submission holds no kernel_code"}};
    r.total_seconds = seconds_since(t0);
    return r;
  }

  if (request.all_turns && ex.kernels.size() > kMaxTurns)
    return tl::unexpected(bad_request(fmt::format("the response holds {} kernels; \"turns\": \"all\" scores at most {}",
                                                  ex.kernels.size(), kMaxTurns),
                                      "score the last kernel (\"turns\": \"last\"), or send the turns apart"));
  std::vector<std::string> kernels;
  if (request.all_turns)
    kernels = ex.kernels;
  else
    kernels.push_back(ex.kernels.back());
  std::map<std::string, std::vector<double>> per_preset;
  r.cached = true;
  for (const auto& source : kernels) {
    KernelScore ks = score_kernel(task, loaded->baseline_digest, source, request);
    r.verify_seconds += ks.verify_seconds;
    r.cached = r.cached && ks.cached;
    if (!ks.scored) {
      r.status = "error";
      r.error = ks.error;
      r.turns.push_back(std::move(ks));
      r.total_seconds = seconds_since(t0);
      return r;
    }
    const bool flagged = has_zeroing_flag(ks.flags);
    for (const auto* p : presets) {
      const double s = preset_score(*p, ks.components, ctx, flagged);
      ks.scores[std::string(p->name)] = s;
      per_preset[std::string(p->name)].push_back(s);
    }
    r.turns.push_back(std::move(ks));
  }
  const KernelScore& last = r.turns.back();
  r.status = "ok";
  r.components = last.components;
  r.flags = last.flags;
  r.verify = last.verify;
  for (const auto* p : presets) {
    const auto& turn_scores = per_preset[std::string(p->name)];
    r.scores[std::string(p->name)] =
        request.all_turns ? trajectory_score(*p, turn_scores, request.gamma) : turn_scores.back();
  }
  r.score = r.scores[std::string(main->name)];
  r.total_seconds = seconds_since(t0);
  return r;
}

Result<ToolResult> RewardScorer::tool(const std::string& task_id, const std::string& name,
                                      const std::string& kernel_code) {
  auto loaded = load(task_id);
  if (!loaded) return tl::unexpected(loaded.error());
  AgentTools tools(*loaded->task, *service_, opt_.verify);
  if (name == "compile") return tools.compile(kernel_code);
  if (name == "verify") return tools.verify(kernel_code);
  if (name == "profile") return tools.profile(kernel_code);
  return tl::unexpected(
      bad_request(fmt::format("unknown tool '{}'", name.substr(0, 100)), "the tools are compile, verify and profile"));
}

Result<ToolResult> RewardScorer::tool_at_shapes(const std::string& name, const std::string& source,
                                                const std::string& entry, const std::vector<TensorSpec>& inputs,
                                                const std::string& target) {
  if (name != "compile" && name != "profile")
    return tl::unexpected(bad_request(fmt::format("'{}' needs a task", name.substr(0, 100)),
                                      "compile and profile run at given shapes; verify needs a task_id"));
  // A task of the kernel's inputs alone: no reference, no outputs to expect.
  Task t;
  t.entry = entry;
  t.target = target;
  for (const auto& spec : inputs) {
    TaskArg a;  // unnamed: bound by position, as the reference server calls nki_kernel(*inputs)
    a.dtype = spec.dtype;
    a.shape = spec.shape;
    t.args.push_back(std::move(a));
  }
  AgentTools tools(t, *service_, opt_.verify);
  return name == "compile" ? tools.compile(source) : tools.profile(source);
}

Result<SpeedResult> RewardScorer::baseline_speed(const std::string& task_id) {
  auto loaded = load(task_id);
  if (!loaded) return tl::unexpected(loaded.error());
  auto files = load_baseline_files(*loaded->task);
  if (!files) return tl::unexpected(files.error());
  const VerifyOptions& vo = opt_.verify;
  return measure_speed(*loaded->task, *files, *service_, vo.speed,
                       SandboxLimits::for_kernel(vo.kernel_seconds, vo.kernel_memory_mib, /*large_reply=*/true));
}

}  // namespace nki_agent
