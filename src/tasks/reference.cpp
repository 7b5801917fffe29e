// The PyTorch reference behind a cache (tasks/reference.h).
#include "tasks/reference.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/clock.h"
#include "core/hash.h"
#include "core/log.h"
#include "runtime/kernel_call.h"
#include "runtime/seccomp_policy.h"
#include "tasks/helpers.h"
#include "tasks/inputs.h"
#include "tasks/reference_cache.h"
#include "tensor/npy.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

// Bumped when the layout or meaning of cache entries changes.
constexpr int kCacheVersion = 2;  // 2: float16/bfloat16 matmuls accumulate in float32 on every machine
constexpr const char* kWorkerScript = "reference_worker.py";

std::string read_small(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().substr(0, 4096);
}

std::vector<std::string> tail_lines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) lines.push_back(line);
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

// One request line; text that is not UTF-8 (never in our own requests) is replaced, not thrown on.
std::string dump_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string default_reference_cache_dir() {
  if (const char* e = std::getenv("NKIA_REFERENCE_CACHE"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "nki-agent" / "references").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "nki-agent" / "references").string();
  return "/tmp/nki-agent-references";
}

std::string torch_fingerprint() {
  static const std::string fp = [] {
    // Where /usr/bin/python3.11 -I looks, in its sys.path order.
    for (const char* dir : {"/usr/local/lib/python3.11/dist-packages/torch", "/usr/lib/python3/dist-packages/torch"}) {
      struct stat st {};
      fs::path init = fs::path(dir) / "__init__.py";
      if (::stat(init.c_str(), &st) != 0) continue;
      return fmt::format("{}|{}|{}|{}", dir, read_small(fs::path(dir) / "version.py"), st.st_size,
                         static_cast<int64_t>(st.st_mtime));
    }
    return std::string("torch:unknown");
  }();
  return fp;
}

nlohmann::json ReferenceStats::to_json() const {
  nlohmann::json j = {
      {"cached", cached}, {"computed", computed}, {"seconds", seconds}, {"compute_seconds", compute_seconds}};
  if (!torch.empty()) j["torch"] = torch;
  return j;
}

ReferenceRunner::ReferenceRunner(const Task& task, ReferenceOptions options)
    : task_(task), opt_(std::move(options)), fingerprint_(torch_fingerprint()) {
  if (opt_.cache_dir.empty()) opt_.cache_dir = default_reference_cache_dir();
}

ReferenceRunner::~ReferenceRunner() {
  worker_.reset();
  if (!scratch_.empty()) {
    std::error_code ec;
    fs::remove_all(scratch_, ec);
  }
  if (opt_.use_cache && stored_ > 0) enforce_reference_cache_limit(opt_.cache_dir);
}

ReferenceStats ReferenceRunner::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string ReferenceRunner::entry_dir(const std::string& key) const {
  return (fs::path(opt_.cache_dir) / key.substr(0, 2) / key).string();
}

Result<std::string> ReferenceRunner::make_temp_dir(const std::string& tag) {
  if (scratch_.empty()) {
    fs::path base = opt_.use_cache ? fs::path(opt_.cache_dir) / "tmp" : fs::temp_directory_path();
    std::error_code ec;
    fs::create_directories(base, ec);
    std::string templ = (base / "nkia-ref-XXXXXX").string();
    if (ec || ::mkdtemp(templ.data()) == nullptr)
      return fail("nkia_reference_cache", fmt::format("cannot create a folder under {}", base.string()),
                  "give a writable cache folder with --cache DIR, or run with --no-cache");
    scratch_ = templ;
  }
  fs::path dir = fs::path(scratch_) / fmt::format("{}-{}", tag, scratch_seq_++);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("nkia_reference_cache", fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  return dir.string();
}

Result<void> ReferenceRunner::publish(const std::string& tmp, const std::string& final_dir) {
  // A damaged entry was removed by the caller; an existing one was published by a concurrent
  // verification of the same case (entries are content-addressed, so it equals ours): keep it.
  std::error_code ec;
  fs::create_directories(fs::path(final_dir).parent_path(), ec);
  ec.clear();
  fs::rename(tmp, final_dir, ec);
  if (!ec) ++stored_;
  if (ec) {
    std::error_code ignore;
    const bool theirs = fs::exists(fs::path(final_dir) / "meta.json", ignore);
    fs::remove_all(tmp, ignore);
    if (!theirs)
      return fail("nkia_reference_cache", fmt::format("cannot store a reference in {}: {}", final_dir, ec.message()),
                  "give a writable cache folder with --cache DIR, or run with --no-cache");
  }
  return {};
}

Result<HelperProcess*> ReferenceRunner::worker() {
  if (worker_ && worker_->alive()) return worker_.get();
  if (worker_error_) return fail(*worker_error_);
  auto t0 = std::chrono::steady_clock::now();
  ProcessLimits lim;
  lim.wall_seconds = opt_.request_seconds;
  lim.cpu_seconds = 24 * 3600;  // the per-request deadline is what bounds it
  lim.address_space_bytes = opt_.memory_mib * (int64_t{1} << 20);
  NKIA_LOG_DEBUG("reference {}: starting the reference worker", task_.label());
  auto h = HelperProcess::spawn(helper_argv(helper_python(opt_.python), kWorkerScript),
                                helper_environment(opt_.threads), lim);
  if (!h) {
    worker_error_ = h.error();
    return fail(h.error());
  }
  worker_ = std::move(*h);
  nlohmann::json load = {{"op", "load"},
                         {"source", task_.task_py},
                         {"path", (fs::path(task_.dir) / "task.py").string()},
                         {"threads", opt_.threads}};
  if (task_.untrusted_reference) {
    // Not our code: the worker runs it only in children under this filter (runtime/seccomp_policy.h).
    auto bpf = reference_child_filter_bpf();
    if (!bpf) {
      worker_error_ = bpf.error();
      worker_.reset();
      return fail(bpf.error());
    }
    load["confined"] = true;
    load["filter"] = to_hex(std::vector<uint8_t>(bpf->begin(), bpf->end()));
  }
  auto answer = worker_->request(dump_line(load), opt_.load_seconds);
  stats_.seconds += seconds_since(t0);
  Result<nlohmann::json> parsed = answer ? Result<nlohmann::json>(nlohmann::json::parse(*answer, nullptr, false))
                                         : Result<nlohmann::json>(fail(answer.error()));
  if (parsed && (parsed->is_discarded() || !parsed->is_object()))
    parsed = fail("nkia_helper_died", "the reference worker answered something that is not JSON");
  if (parsed && !parsed->value("ok", false)) {
    Diagnostic d =
        Diagnostic::error("nkia_reference_failed",
                          fmt::format("{}: loading task.py failed: {}", task_.label(), parsed->value("error", "")),
                          "task.py must import torch, define Model and get_init_inputs, and run on the CPU");
    for (auto& l : tail_lines(parsed->value("traceback", ""), 12)) d.with_note(l);
    parsed = fail(std::move(d));
  }
  if (!parsed) {
    Diagnostic d = parsed.error();
    if (d.code.rfind("nkia_helper", 0) == 0) {
      d.message =
          fmt::format("the PyTorch reference worker ({}) could not start: {}", helper_python(opt_.python), d.message);
      d.hint = "it needs Debian's python3.11 with python3-torch and python3-numpy (scripts/install-deps.sh)";
      for (auto& l : tail_lines(worker_->stderr_tail(), 12)) d.with_note(l);
    }
    worker_error_ = d;
    worker_.reset();
    return fail(std::move(d));
  }
  stats_.torch = parsed->value("torch", "");
  return worker_.get();
}

Result<nlohmann::json> ReferenceRunner::ask(nlohmann::json request, double seconds) {
  auto w = worker();
  if (!w) return fail(w.error());
  // A confined reference's child is killed by the worker itself a little before this deadline,
  // so the worker lives on and answers why.
  if (task_.untrusted_reference) request["seconds"] = std::max(1.0, seconds * 0.9 - 1);
  auto t0 = std::chrono::steady_clock::now();
  auto answer = (*w)->request(dump_line(request), seconds);
  stats_.seconds += seconds_since(t0);
  if (!answer) {
    Diagnostic d = answer.error();
    d.message = fmt::format("{}: the reference worker failed during '{}': {}", task_.label(), request.value("op", ""),
                            d.message);
    for (auto& l : tail_lines((*w)->stderr_tail(), 12)) d.with_note(l);
    worker_error_ = d;
    return fail(std::move(d));
  }
  auto j = nlohmann::json::parse(*answer, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail("nkia_helper_died", "the reference worker answered something that is not JSON");
  if (!j.value("ok", false)) {
    Diagnostic d = Diagnostic::error("nkia_reference_failed",
                                     fmt::format("{}: the PyTorch reference failed ({}): {}", task_.label(),
                                                 request.value("op", ""), j.value("error", "")),
                                     "this is a fault of the task (task.py / task.toml), not of the kernel");
    for (auto& l : tail_lines(j.value("traceback", ""), 12)) d.with_note(l);
    return fail(std::move(d));
  }
  return j;
}

namespace {

nlohmann::json param_request(const TaskArg& a) {
  nlohmann::json p = {{"name", a.name},
                      {"dtype", a.torch_dtype},
                      {"dist", std::string(dist_name(a.dist))},
                      {"dist_explicit", a.dist_explicit}};
  if (a.low) p["low"] = *a.low;
  if (a.high) p["high"] = *a.high;
  return p;
}

Result<std::vector<Tensor>> load_params(const Task& task, const std::string& dir) {
  std::vector<Tensor> out;
  for (const auto& a : task.args) {
    if (a.kind != ArgKind::kParam) continue;
    auto t = npy_load((fs::path(dir) / (a.name + ".npy")).string());
    if (!t) return fail(t.error());
    if (t->shape() != a.shape)
      return fail("nkia_reference_mismatch",
                  fmt::format("{}: parameter '{}' has shape {} in the model, task.toml says {}", task.label(), a.name,
                              shape_str(t->shape()), shape_str(a.shape)),
                  "make task.toml's [[args]] shape match the Model's state_dict");
    out.push_back(t->dtype() == a.dtype ? std::move(*t) : t->astype(a.dtype));
  }
  // Into sealed shared memory, once: every kernel run of every case with this seed then hands the
  // same pages to its worker.
  KernelCall holder;
  holder.inputs = std::move(out);
  auto shared = share_large_inputs(holder);
  if (!shared) return fail(shared.error());
  return std::move(holder.inputs);
}

}  // namespace

Result<std::string> ReferenceRunner::params_dir(uint64_t seed) {
  std::error_code ec;
  if (auto it = param_dirs_.find(seed); it != param_dirs_.end()) {
    // Still there (the cache may have been pruned since): mark it used, for every case it serves.
    if (!opt_.use_cache) return it->second;
    if (fs::exists(fs::path(it->second) / "meta.json", ec)) {
      touch_reference_entry(it->second);
      return it->second;
    }
    param_dirs_.erase(it);
  }
  Hasher h;
  h.field("params").field(int64_t{kCacheVersion}).field(task_.hash).field(static_cast<int64_t>(seed));
  h.field(fingerprint_).field(helper_source(kWorkerScript)).field(int64_t{opt_.threads});
  const std::string key = to_hex(h.finish());
  const std::string final_dir = entry_dir(key);
  bool has_params = false;
  for (const auto& a : task_.args) has_params |= a.kind == ArgKind::kParam;
  if (opt_.use_cache && fs::exists(fs::path(final_dir) / "meta.json", ec)) {
    touch_reference_entry(final_dir);
    param_dirs_[seed] = final_dir;
    return final_dir;
  }
  auto tmp = make_temp_dir("params");
  if (!tmp) return fail(tmp.error());
  if (has_params) {
    nlohmann::json req = {{"op", "params"}, {"seed", seed}, {"params", nlohmann::json::array()}, {"out_dir", *tmp}};
    for (const auto& a : task_.args)
      if (a.kind == ArgKind::kParam) req["params"].push_back(param_request(a));
    auto answer = ask(req, opt_.request_seconds);
    if (!answer) return fail(answer.error());
    ++stats_.computed;
    stats_.compute_seconds += answer->value("seconds", 0.0);
  }
  std::ofstream(fs::path(*tmp) / "meta.json")
      << nlohmann::json{{"kind", "params"}, {"task", task_.label()}, {"seed", seed}, {"torch", stats_.torch}}.dump();
  if (!opt_.use_cache) {
    param_dirs_[seed] = *tmp;
    return *tmp;
  }
  if (auto ok = publish(*tmp, final_dir); !ok) return fail(ok.error());
  param_dirs_[seed] = final_dir;
  return final_dir;
}

void ReferenceRunner::keep_params(uint64_t seed, const std::vector<Tensor>& params) {
  params_[seed] = params;
  params_order_.push_back(seed);
  auto bytes = [&](uint64_t s) {
    int64_t n = 0;
    for (const Tensor& t : params_[s]) n += t.nbytes();
    return n;
  };
  int64_t older = 0;  // held for the seeds before the two most recent
  for (size_t i = 0; i + 2 < params_order_.size(); ++i) older += bytes(params_order_[i]);
  while (params_order_.size() > 2 && older > kMaxKeptParamBytes) {
    older -= bytes(params_order_.front());
    params_.erase(params_order_.front());
    params_order_.erase(params_order_.begin());
  }
}

Result<std::vector<Tensor>> ReferenceRunner::params(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = params_.find(seed); it != params_.end()) return it->second;
  bool has_params = false;
  for (const auto& a : task_.args) has_params |= a.kind == ArgKind::kParam;
  if (!has_params) return std::vector<Tensor>{};
  for (int attempt = 0;; ++attempt) {
    const int computed_before = stats_.computed;
    auto dir = params_dir(seed);
    if (!dir) return fail(dir.error());
    auto loaded = load_params(task_, *dir);
    if (loaded) {
      if (stats_.computed == computed_before) ++stats_.cached;
      keep_params(seed, *loaded);
      return loaded;
    }
    if (!opt_.use_cache || attempt > 0 || loaded.error().code == "nkia_reference_mismatch") return fail(loaded.error());
    std::error_code ec;  // a damaged cache entry: recompute it once
    fs::remove_all(*dir, ec);
    param_dirs_.erase(seed);
  }
}

Result<std::vector<Tensor>> ReferenceRunner::outputs(uint64_t seed, const ShapeSet& set, InputProfile profile,
                                                     const std::vector<Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(mu_);
  Hasher h;
  h.field("outputs").field(int64_t{kCacheVersion}).field(task_.hash).field(static_cast<int64_t>(seed));
  h.field(set.name);
  for (const auto& s : set.args) h.field(shape_str(s));
  for (const auto& s : set.outputs) h.field(shape_str(s));
  h.field(profile_name(profile)).field(fmt::format("{}", task_.large_scale)).field(int64_t{kInputGeneratorVersion});
  h.field(fingerprint_).field(helper_source(kWorkerScript)).field(int64_t{opt_.threads});
  const std::string key = to_hex(h.finish());
  const std::string final_dir = entry_dir(key);

  auto load_all = [&](const std::string& dir) -> Result<std::vector<Tensor>> {
    std::vector<Tensor> outs;
    for (size_t k = 0; k < task_.outputs.size(); ++k) {
      // Read into huge-page memory, not mapped: on a virtual machine every 4 KiB page of a mapping
      // costs a fault when first read, and reading is half the cost (docs/perf.md).
      auto t = npy_load((fs::path(dir) / fmt::format("out{}.npy", k)).string());
      if (!t) return fail(t.error());
      outs.push_back(std::move(*t));
    }
    return outs;
  };
  std::error_code ec;
  if (opt_.use_cache && fs::exists(fs::path(final_dir) / "meta.json", ec)) {
    if (auto outs = load_all(final_dir)) {
      touch_reference_entry(final_dir);
      ++stats_.cached;
      NKIA_LOG_DEBUG("reference {}: {} shapes, seed {}: from the cache", task_.label(), set.name, seed);
      return outs;
    }
    fs::remove_all(final_dir, ec);  // damaged: recompute
  }

  auto pdir = params_dir(seed);
  if (!pdir) return fail(pdir.error());
  auto tmp = make_temp_dir("case");
  if (!tmp) return fail(tmp.error());
  fs::path in_dir = fs::path(*tmp) / "in";
  fs::path out_dir = fs::path(*tmp) / "out";
  fs::create_directories(in_dir, ec);
  fs::create_directories(out_dir, ec);
  nlohmann::json req = {{"op", "forward"},
                        {"seed", seed},
                        {"params_dir", *pdir},
                        {"params", nlohmann::json::array()},
                        {"inputs", nlohmann::json::array()},
                        {"out_dir", out_dir.string()}};
  size_t next_input = 0;
  for (const auto& a : task_.args) {
    if (a.kind == ArgKind::kParam) {
      req["params"].push_back({{"name", a.name}, {"dtype", a.torch_dtype}});
      continue;
    }
    if (next_input >= inputs.size())
      return fail("nkia_reference_mismatch", fmt::format("{}: fewer inputs than the task's input args", task_.label()));
    std::string path = (in_dir / (a.name + ".npy")).string();
    if (auto ok = npy_save(path, inputs[next_input++], {NarrowAs::kFloat32}); !ok) return fail(ok.error());
    req["inputs"].push_back({{"name", a.name}, {"dtype", a.torch_dtype}, {"path", path}});
  }
  NKIA_LOG_DEBUG("reference {}: {} shapes, seed {}: computing", task_.label(), set.name, seed);
  auto answer = ask(req, opt_.request_seconds);
  fs::remove_all(in_dir, ec);
  if (!answer) return fail(answer.error());
  ++stats_.computed;
  stats_.compute_seconds += answer->value("seconds", 0.0);
  const auto& outs_info = (*answer)["outputs"];
  if (!outs_info.is_array() || outs_info.size() != task_.outputs.size())
    return fail("nkia_reference_mismatch",
                fmt::format("{}: the reference returns {} output(s); task.toml declares {}", task_.label(),
                            outs_info.is_array() ? outs_info.size() : 0, task_.outputs.size()),
                "make task.toml's [[outputs]] match what Model.forward returns");
  for (size_t k = 0; k < outs_info.size(); ++k) {
    Shape shape = outs_info[k].value("shape", Shape{});
    std::string dtype = outs_info[k].value("dtype", "");
    if (shape != set.outputs[k])
      return fail("nkia_reference_mismatch",
                  fmt::format("{}: at the {} shapes the reference's output {} has shape {}; task.toml says {}",
                              task_.label(), set.name, k, shape_str(shape), shape_str(set.outputs[k])),
                  "fix the output shape in task.toml ([[outputs]] or the variant's outputs)");
    if (dtype != task_.outputs[k].torch_dtype)
      return fail("nkia_reference_mismatch",
                  fmt::format("{}: the reference's output {} is {}; task.toml says {}", task_.label(), k, dtype,
                              task_.outputs[k].torch_dtype),
                  "fix the output dtype in task.toml");
  }
  std::ofstream(out_dir / "meta.json") << nlohmann::json{
      {"kind", "outputs"},
      {"task", task_.label()},
      {"seed", seed},
      {"set", set.name},
      {"profile", std::string(profile_name(profile))},
      {"torch", stats_.torch}}.dump();
  // Read back before publishing: once published, the entry may be pruned by another process.
  auto outs = load_all(out_dir.string());
  if (!outs) return fail(outs.error());
  if (opt_.use_cache) {
    if (auto ok = publish(out_dir.string(), final_dir); !ok) return fail(ok.error());
  }
  fs::remove_all(*tmp, ec);
  return outs;
}

Result<nlohmann::json> ReferenceRunner::inspect(uint64_t seed, bool forward) {
  std::lock_guard<std::mutex> lock(mu_);
  return ask({{"op", "inspect"}, {"seed", seed}, {"forward", forward}}, opt_.request_seconds);
}

}  // namespace nki_agent
