// The verification pipeline (tasks/verify.h).
#include "tasks/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "core/clock.h"
#include "core/hash.h"
#include "core/thread_pool.h"
#include "tasks/inputs.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

// The sources of a kernel's files in path order: two kernels with the same digest run alike.
std::string kernel_files_digest(const KernelFiles& f) {
  std::string d = f.main_path + '\0';
  for (const auto& [path, src] : f.files) d += path + '\0' + src + '\0';
  return d;
}

// Failures of the machinery rather than of the kernel: they end the verification as a Result error.
bool infrastructure_code(const std::string& code) {
  return code.rfind("nkia_worker_", 0) == 0 || code == "nkia_sandbox_setup" || code == "nkia_sandbox_bad_limits";
}

std::string check_hint(const std::string& check) {
  if (check == "unwritten")
    return "store every element of each output: derive trip counts from the input shapes with ceiling division and "
           "mask the last, partial tile";
  if (check == "uninitialized_read")
    return "give the compute and store calls the same mask as the load that filled the tile, or initialise the tile "
           "(nl.zeros, nisa.memset) before a partial load";
  if (check == "zero_output" || check == "constant_output")
    return "compute the result from the inputs and store it into the tensor you return";
  if (check == "input_copy") return "the output must be computed from the inputs, not copied from one of them";
  if (check == "mismatch" || check == "relative_norm")
    return "compare your math with task.py's forward step by step; keep the task's precision (no bfloat16 "
           "shortcuts in a float32 task) and check the axes of reductions and broadcasts";
  if (check == "output_shape")
    return "derive every size from the input shapes (x.shape), never from constants: the task runs your kernel at "
           "several shapes";
  if (check == "output_dtype") return "allocate each output with the task's dtype";
  if (check == "output_count") return "return every output of forward(), in order, as a tuple when there are several";
  return {};
}

std::string describe_set(const Task& task, const ShapeSet& set) {
  std::string s;
  for (size_t i = 0; i < task.args.size(); ++i) {
    if (task.args[i].kind != ArgKind::kInput) continue;
    s += fmt::format("{}{}={}", s.empty() ? "" : ", ", task.args[i].name, shape_str(set.args[i]));
  }
  return s;
}

std::string narrower_note(DType got, DType want) {
  if (dtype_is_float(got) && dtype_is_float(want) && dtype_size(got) < dtype_size(want))
    return " — a precision drop the task does not allow";
  return "";
}

}  // namespace

KernelCall prompt_timing_call(const Task& task, KernelFiles files) {
  KernelCall call;
  call.src = std::move(files);
  call.entry = task.entry;
  call.kernel_only = true;
  call.target = task.target;
  call.compute = false;
  call.collect_trace = true;
  call.want_outputs = false;
  for (const auto& a : task.args) {
    call.input_names.push_back(a.name);
    call.zero_inputs.push_back(TensorSpec{a.name, a.dtype, a.shape});
  }
  return call;
}

SandboxLimits verify_limits(double seconds, int64_t memory_mib, bool with_trace) {
  SandboxLimits limits;
  limits.wall_seconds = seconds;
  limits.cpu_seconds = seconds;
  limits.address_space_bytes = memory_mib << 20;
  limits.max_output_bytes = kMaxOutputBytesCeiling;  // outputs of a few hundred MiB, or a trace
  (void)with_trace;
  return limits;
}

CaseInputs make_case_inputs(const Task& task, const ShapeSet& set, uint64_t seed, InputProfile profile,
                            const std::vector<Tensor>& params) {
  CaseInputs ci;
  size_t next_param = 0;
  for (size_t i = 0; i < task.args.size(); ++i) {
    const TaskArg& a = task.args[i];
    ci.names.push_back(a.name);
    if (a.kind == ArgKind::kParam) {
      ci.kernel_args.push_back(next_param < params.size() ? params[next_param] : Tensor());
      ++next_param;
      continue;
    }
    Tensor t = generate_input(a, set.args[i], seed, profile, set.name, task.large_scale);
    ci.forward_inputs.push_back(t);
    ci.kernel_args.push_back(std::move(t));
  }
  return ci;
}

nlohmann::json SpeedResult::to_json() const {
  nlohmann::json j = {{"available", available}};
  if (!available) {
    j["reason"] = reason;
    return j;
  }
  j["target"] = target;
  j["candidate_seconds"] = candidate_seconds;
  j["baseline_seconds"] = baseline_seconds;
  j["speedup"] = speedup;
  if (roofline_seconds > 0) {
    j["roofline_seconds"] = roofline_seconds;
    j["roofline_fraction"] = roofline_fraction;
  }
  return j;
}

nlohmann::json CaseResult::to_json() const {
  nlohmann::json j = {{"index", index},
                      {"shapes", shape_set},
                      {"seed", seed},
                      {"profile", profile},
                      {"ran", ran},
                      {"passed", passed},
                      {"kernel_seconds", kernel_seconds}};
  if (timing_only) j["timing_only"] = true;
  if (!check.empty()) {
    j["check"] = check;
    j["message"] = message;
  }
  if (kernel_error) j["kernel_error"] = kernel_error->to_json();
  if (!outputs.empty()) {
    j["outputs"] = nlohmann::json::array();
    for (const auto& o : outputs) j["outputs"].push_back(o.to_json());
  }
  if (!notes.empty()) j["notes"] = notes;
  return j;
}

nlohmann::json VerifyResult::to_json() const {
  nlohmann::json j = {{"task", task},
                      {"kernel", kernel},
                      {"passed", passed},
                      {"cases_total", cases_total},
                      {"cases_run", cases_run},
                      {"cases_passed", cases_passed},
                      {"speed", speed.to_json()},
                      {"reference", reference.to_json()},
                      {"seconds", seconds}};
  if (!passed) {
    j["check"] = check;
    j["message"] = message;
  }
  if (diagnostic) j["diagnostic"] = diagnostic->to_json();
  if (!violations.empty()) {
    j["violations"] = nlohmann::json::array();
    for (const auto& v : violations)
      j["violations"].push_back({{"rule", v.rule},
                                 {"message", v.message},
                                 {"file", v.file},
                                 {"line", v.line},
                                 {"col", v.col},
                                 {"hint", v.hint}});
  }
  j["cases"] = nlohmann::json::array();
  for (const auto& c : cases) j["cases"].push_back(c.to_json());
  if (!warnings.empty()) j["warnings"] = warnings;
  return j;
}

std::string VerifyResult::format() const {
  std::string s;
  if (passed) {
    int timing_only = 0;
    for (const auto& c : cases) timing_only += c.timing_only;
    s += fmt::format("PASS  {} on {}: {} cases (seeds x shapes) match the reference", kernel, task,
                     cases_passed - timing_only);
    s += timing_only ? fmt::format(", {} more checked without numerics\n", timing_only) : "\n";
  } else {
    s += fmt::format("FAIL  {} on {}: {}\n", kernel, task, check);
    s += "  " + message + "\n";
    if (diagnostic && !diagnostic->hint.empty()) s += "  hint: " + diagnostic->hint + "\n";
    if (diagnostic && check == "kernel_error")
      for (const auto& n : diagnostic->notes) s += "  note: " + n + "\n";
    for (size_t i = 1; i < violations.size() && i < 10; ++i)
      s += fmt::format("  also {}:{}: [{}] {}\n", violations[i].file, violations[i].line, violations[i].rule,
                       violations[i].message);
    if (check != "static_policy")
      s += fmt::format("  cases: {} run of {}, {} passed\n", cases_run, cases_total, cases_passed);
  }
  for (const auto& c : cases)
    for (const auto& n : c.notes) s += fmt::format("  note ({} seed {}): {}\n", c.shape_set, c.seed, n);
  for (const auto& w : warnings) s += "  " + w + "\n";
  if (speed.available) {
    s += fmt::format("  speed on {}: {:.3f} us simulated, baseline {:.3f} us, speedup {:.2f}x", speed.target,
                     speed.candidate_seconds * 1e6, speed.baseline_seconds * 1e6, speed.speedup);
    if (speed.roofline_seconds > 0) s += fmt::format(", {:.1f}% of the roofline bound", speed.roofline_fraction * 100);
    s += "\n";
  } else if (passed) {
    s += "  speed: not available (" + speed.reason + ")\n";
  }
  s += fmt::format("  reference results: {} from the cache, {} computed; verify took {:.2f} s\n", reference.cached,
                   reference.computed, seconds);
  return s;
}

namespace {

struct Case {
  int index;
  const ShapeSet* set;
  uint64_t seed;
  InputProfile profile;
  bool timing_only;
};

// Bytes of a shape set's inputs and of its outputs.
std::pair<int64_t, int64_t> set_bytes(const Task& task, const ShapeSet& set) {
  int64_t in = 0, out = 0;
  for (size_t i = 0; i < task.args.size(); ++i) in += shape_numel(set.args[i]) * dtype_size(task.args[i].dtype);
  for (size_t k = 0; k < task.outputs.size(); ++k)
    out += shape_numel(set.outputs[k]) * dtype_size(task.outputs[k].dtype);
  return {in, out};
}

class Verifier {
 public:
  Verifier(const Task& task, const KernelFiles& files, KernelService& service, const VerifyOptions& opt)
      : task_(task), files_(files), service_(service), opt_(opt), ref_(task, opt.reference) {}

  // The candidate's result on one case; a Result error is the machinery's failure.
  Result<CaseResult> run_case(const Case& c) {
    CaseResult r;
    r.index = c.index;
    r.shape_set = c.set->name;
    r.seed = c.seed;
    r.profile = c.timing_only ? "none" : std::string(profile_name(c.profile));
    r.ran = true;
    r.timing_only = c.timing_only;
    if (c.timing_only) return run_timing_only(c, std::move(r));
    auto params = ref_.params(c.seed);
    if (!params) return fail(params.error());
    CaseInputs in = make_case_inputs(task_, *c.set, c.seed, c.profile, *params);
    const std::string where = fmt::format("at the {} shapes ({}), seed {} ({} inputs)", c.set->name,
                                          describe_set(task_, *c.set), c.seed, r.profile);

    // The candidate first: nothing of this case's reference exists in this process yet.
    KernelCall call;
    call.src = files_;
    call.entry = task_.entry;
    call.kernel_only = true;  // a candidate has no host side: it never sees values
    call.inputs = in.kernel_args;
    call.input_names = in.names;
    call.target = task_.target;
    call.collect_trace = false;
    auto t0 = std::chrono::steady_clock::now();
    auto outcome = service_.run(call, verify_limits(opt_.kernel_seconds, opt_.kernel_memory_mib, false));
    r.kernel_seconds = seconds_since(t0);
    if (!outcome) {
      if (infrastructure_code(outcome.error().code)) return fail(outcome.error());
      r.check = "kernel_error";
      r.kernel_error = outcome.error();
      const Diagnostic& d = outcome.error();
      std::string loc = d.loc.known() ? fmt::format("{}:{}: ", d.loc.file, d.loc.line) : "";
      r.message = fmt::format("the kernel failed {}: {}error[{}]: {}", where, loc, d.code, d.message);
      return r;
    }
    keep_warnings(c, *outcome);
    const auto& outs = outcome->outputs;
    std::vector<TensorSpec> specs;
    for (const auto& o : outs) specs.push_back(TensorSpec{"", o.dtype(), o.shape()});
    if (structure_fails(specs, *c.set, where, r)) {
      // A task whose toml disagrees with its own reference is the task's fault, not the kernel's.
      if (r.check == "output_shape")
        if (auto expected = ref_.outputs(c.seed, *c.set, c.profile, in.forward_inputs); !expected)
          return fail(expected.error());
      return r;
    }
    // Only now the reference of this case.
    auto expected = ref_.outputs(c.seed, *c.set, c.profile, in.forward_inputs);
    if (!expected) return fail(expected.error());
    r.passed = true;
    // The run's own word on memory nothing wrote: NaN stored from it is an uninitialised read.
    const Diagnostic* uninit = nullptr;
    for (const Diagnostic& w : outcome->warnings)
      if (w.code == "nkia_uninitialized_read" && uninit == nullptr) uninit = &w;
    for (size_t k = 0; k < outs.size(); ++k) {
      const OutputStores* stores = k < outcome->output_stores.size() ? &outcome->output_stores[k] : nullptr;
      OutputCheck oc =
          compare_output(outs[k], (*expected)[k], task_.tolerance_for(task_.outputs[k].dtype), in.kernel_args, stores);
      if (oc.check == "mismatch" && oc.stored_nan > 0 && uninit != nullptr) {
        oc.check = "uninitialized_read";
        const std::string loc = uninit->loc.known() ? fmt::format(" at {}:{}", uninit->loc.file, uninit->loc.line) : "";
        oc.message = fmt::format(
            "{} elements hold NaN the kernel stored where the reference is finite: it read memory "
            "nothing wrote{} ({}) and the garbage reached the output; {}",
            oc.stored_nan, loc, uninit->message, oc.message);
      }
      if (oc.reference_too_small)
        r.notes.push_back(
            fmt::format("output {}: the reference is below atol (max |expected| = {:.3g}); only the "
                        "relative-norm check applies",
                        k, oc.expected_max_abs));
      if (!oc.passed() && r.passed) {
        r.passed = false;
        r.check = oc.check;
        r.message = fmt::format("output {} {}: {}", k, where, oc.message);
      }
      r.outputs.push_back(std::move(oc));
    }
    return r;
  }

  // The simulator's warnings of the prompt-shape case with the first seed (one case: no other thread
  // writes them), for VerifyResult::warnings.
  void keep_warnings(const Case& c, const KernelOutcome& outcome) {
    if (c.set->name != "prompt" || c.seed != opt_.seed_base) return;
    for (const Diagnostic& w : outcome.warnings) {
      const std::string loc = w.loc.known() ? fmt::format("{}:{}: ", w.loc.file, w.loc.line) : "";
      prompt_warnings_.push_back(
          fmt::format("{}warning[{}]: {}{}", loc, w.code, w.message, w.hint.empty() ? "" : " (hint: " + w.hint + ")"));
    }
  }

  // Output count, shapes and dtypes; true (with r's check and message set) when they are wrong.
  bool structure_fails(const std::vector<TensorSpec>& outs, const ShapeSet& set, const std::string& where,
                       CaseResult& r) {
    if (outs.size() != task_.outputs.size()) {
      r.check = "output_count";
      r.message = fmt::format("the kernel returned {} output(s) {}; the task expects {}", outs.size(), where,
                              task_.outputs.size());
      return true;
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      if (outs[k].shape != set.outputs[k]) {
        r.check = "output_shape";
        r.message = fmt::format("output {} has shape {} {}; expected {}", k, shape_str(outs[k].shape), where,
                                shape_str(set.outputs[k]));
        return true;
      }
      if (outs[k].dtype != task_.outputs[k].dtype) {
        r.check = "output_dtype";
        r.message =
            fmt::format("output {} is {}; the task requires {}{}", k, dtype_name(outs[k].dtype),
                        dtype_name(task_.outputs[k].dtype), narrower_note(outs[k].dtype, task_.outputs[k].dtype));
        return true;
      }
    }
    return false;
  }

  // A shape set too large to compute: every check of the simulator on zero inputs, no numerics.
  Result<CaseResult> run_timing_only(const Case& c, CaseResult r) {
    const std::string where =
        fmt::format("at the {} shapes ({}, checked without numerics)", c.set->name, describe_set(task_, *c.set));
    KernelCall call;
    call.src = files_;
    call.entry = task_.entry;
    call.kernel_only = true;  // a candidate has no host side: it never sees values
    call.target = task_.target;
    call.compute = false;
    call.collect_trace = false;
    call.want_outputs = false;
    for (size_t i = 0; i < task_.args.size(); ++i) {
      call.input_names.push_back(task_.args[i].name);
      call.zero_inputs.push_back(TensorSpec{task_.args[i].name, task_.args[i].dtype, c.set->args[i]});
    }
    auto t0 = std::chrono::steady_clock::now();
    auto outcome = service_.run(call, verify_limits(opt_.kernel_seconds, opt_.kernel_memory_mib, false));
    r.kernel_seconds = seconds_since(t0);
    if (!outcome) {
      if (infrastructure_code(outcome.error().code)) return fail(outcome.error());
      const Diagnostic& d = outcome.error();
      std::string loc = d.loc.known() ? fmt::format("{}:{}: ", d.loc.file, d.loc.line) : "";
      r.check = "kernel_error";
      r.kernel_error = d;
      r.message = fmt::format("the kernel failed {}: {}error[{}]: {}", where, loc, d.code, d.message);
      return r;
    }
    keep_warnings(c, *outcome);
    if (structure_fails(outcome->output_specs, *c.set, where, r)) return r;
    auto [in_bytes, out_bytes] = set_bytes(task_, *c.set);
    r.passed = true;
    r.notes.push_back(
        fmt::format("the {} shapes ({:.0f} MiB in, {:.0f} MiB out) are too large to compute on the "
                    "simulator: checked without numerics",
                    c.set->name, in_bytes / 1048576.0, out_bytes / 1048576.0));
    return r;
  }

  Result<VerifyResult> run() {
    auto t0 = std::chrono::steady_clock::now();
    VerifyResult res;
    res.task = task_.label();
    res.kernel = (fs::path(files_.root) / files_.main_path).string();

    if (opt_.static_policy) {
      PolicyOptions po = opt_.policy;
      po.forbidden_dtypes = task_.forbidden_dtypes();
      auto v = check_static_policy(files_, po);
      if (!v) return fail(v.error());
      if (!v->empty()) {
        res.violations = *v;
        res.check = "static_policy";
        const auto& f = v->front();
        res.diagnostic = f.to_diagnostic(files_.root);
        res.message = fmt::format("{}:{}: [{}] {} ({} violation{} of the static policy)", f.file, f.line, f.rule,
                                  f.message, v->size(), v->size() == 1 ? "" : "s");
        res.seconds = seconds_since(t0);
        return res;
      }
    }

    std::vector<ShapeSet> sets = task_.shape_sets();
    if (!opt_.shape_sets.empty()) {
      std::vector<ShapeSet> chosen;
      for (const auto& name : opt_.shape_sets) {
        auto it = std::find_if(sets.begin(), sets.end(), [&](const ShapeSet& s) { return s.name == name; });
        if (it == sets.end()) {
          std::string known;
          for (const auto& s : sets) known += (known.empty() ? "" : ", ") + s.name;
          return fail("nkia_bad_argument", fmt::format("{} has no shape set '{}'", task_.label(), name),
                      "choose from: " + known);
        }
        chosen.push_back(*it);
      }
      sets = std::move(chosen);
    }
    const int nseeds = opt_.seeds > 0 ? opt_.seeds : task_.seeds;
    std::vector<const ShapeSet*> computed, timing_only;
    for (const auto& s : sets) {
      auto [in, out] = set_bytes(task_, s);
      (in > opt_.max_compute_bytes || out > opt_.max_compute_bytes ? timing_only : computed).push_back(&s);
    }
    if (computed.empty())
      return fail("nkia_task_too_large",
                  fmt::format("{}: every shape set exceeds {} MiB of inputs or outputs; nothing can be computed on the "
                              "simulator, so correctness cannot be verified",
                              task_.label(), opt_.max_compute_bytes >> 20),
                  "give the task a variant small enough to compute (this is the task's fault, not the kernel's)");
    std::vector<Case> cases;
    for (int i = 0; i < nseeds; ++i) {
      for (const ShapeSet* s : computed)
        cases.push_back({static_cast<int>(cases.size()), s, opt_.seed_base + static_cast<uint64_t>(i),
                         profile_for_seed(task_, i), false});
      if (i == 0)
        for (const ShapeSet* s : timing_only)
          cases.push_back({static_cast<int>(cases.size()), s, opt_.seed_base, InputProfile::kNormal, true});
    }
    res.cases_total = static_cast<int>(cases.size());
    res.cases.resize(cases.size());
    for (const auto& c : cases) {
      res.cases[c.index].index = c.index;
      res.cases[c.index].shape_set = c.set->name;
      res.cases[c.index].seed = c.seed;
      res.cases[c.index].profile = c.timing_only ? "none" : std::string(profile_name(c.profile));
      res.cases[c.index].timing_only = c.timing_only;
    }

    std::mutex mu;
    std::atomic<int> first_failure{static_cast<int>(cases.size())};
    std::optional<std::pair<int, Diagnostic>> infra;
    auto run_one = [&](const Case& c) {
      if (opt_.fail_fast && c.index > first_failure.load()) return;
      auto r = run_case(c);
      std::lock_guard<std::mutex> lock(mu);
      if (!r) {
        if (!infra || infra->first > c.index) infra = std::make_pair(c.index, r.error());
        first_failure = std::min(first_failure.load(), c.index);
        return;
      }
      if (!r->passed) first_failure = std::min(first_failure.load(), c.index);
      res.cases[c.index] = std::move(*r);
    };
    if (!cases.empty()) run_one(cases[0]);
    if (cases.size() > 1 && !(opt_.fail_fast && first_failure.load() == 0)) {
      int parallel = opt_.parallel > 0 ? opt_.parallel : service_.pool().size();
      ThreadPool pool(static_cast<unsigned>(std::max(1, std::min<int>(parallel, static_cast<int>(cases.size()) - 1))));
      pool.parallel_for(static_cast<int64_t>(cases.size()) - 1,
                        [&](int64_t i) { run_one(cases[static_cast<size_t>(i) + 1]); });
    }
    if (infra) return fail(infra->second);
    res.warnings = prompt_warnings_;

    for (const auto& c : res.cases) {
      res.cases_run += c.ran;
      res.cases_passed += c.passed;
    }
    res.passed = res.cases_run == res.cases_total && res.cases_passed == res.cases_total;
    if (!res.passed) {
      for (const auto& c : res.cases) {
        if (!c.ran || c.passed) continue;
        res.check = c.check;
        res.message = c.message;
        if (c.kernel_error) {
          res.diagnostic = *c.kernel_error;
        } else {
          Diagnostic d = Diagnostic::error("nkia_verify_" + c.check, c.message, check_hint(c.check));
          d.at(SourceLoc{res.kernel, 0, 0});
          res.diagnostic = d;
        }
        break;
      }
    }
    if (res.passed)
      res.speed = measure_speed();
    else
      res.speed.reason = "the kernel did not pass";
    res.reference = ref_.stats();
    res.seconds = seconds_since(t0);
    return res;
  }

 private:
  // Simulated time of a timing-only run at the prompt's shapes.
  Result<double> simulated_seconds(const KernelFiles& files) {
    auto outcome = service_.run(prompt_timing_call(task_, files),
                                verify_limits(opt_.kernel_seconds, opt_.kernel_memory_mib, true));
    if (!outcome) return fail(outcome.error());
    return opt_.speed.simulate(outcome->trace, task_.target);
  }

  SpeedResult measure_speed() {
    SpeedResult s;
    s.target = task_.target;
    if (!opt_.speed.available()) {
      s.reason = "no cost model was given to this verification";
      return s;
    }
    auto cand = simulated_seconds(files_);
    if (!cand) {
      s.reason = "the candidate's timing run failed: " + cand.error().message;
      return s;
    }
    auto base_files = load_kernel_files(task_.baseline_path());
    if (!base_files) {
      s.reason = "the task's baseline cannot be read: " + base_files.error().message;
      return s;
    }
    // The baseline's time: remembered per task, target and source; the candidate's own when it is
    // the baseline itself.
    std::string key = task_.id + "\n" + task_.target + "\n" + sha256_hex(kernel_files_digest(*base_files));
    Result<double> base = fail("nkia_internal", "unset");
    {
      std::lock_guard<std::mutex> lock(opt_.speed.baseline_times->mu);
      auto& times = opt_.speed.baseline_times->seconds;
      if (auto it = times.find(key); it != times.end()) base = it->second;
    }
    if (!base) {
      if (kernel_files_digest(*base_files) == kernel_files_digest(files_))
        base = *cand;
      else
        base = simulated_seconds(*base_files);
      if (!base) {
        s.reason = "the baseline's timing run failed: " + base.error().message;
        return s;
      }
      std::lock_guard<std::mutex> lock(opt_.speed.baseline_times->mu);
      opt_.speed.baseline_times->seconds[key] = *base;
    }
    if (*cand <= 0 || *base <= 0) {
      s.reason = "the cost model gave a zero time";
      return s;
    }
    s.available = true;
    s.candidate_seconds = *cand;
    s.baseline_seconds = *base;
    s.speedup = *base / *cand;
    if (opt_.speed.roofline && (task_.flops > 0 || task_.bytes > 0)) {
      if (auto roof = opt_.speed.roofline(task_.flops, task_.bytes, task_.target, !task_.strict_precision);
          roof && *roof > 0) {
        s.roofline_seconds = *roof;
        s.roofline_fraction = *roof / *cand;
      }
    }
    return s;
  }

  const Task& task_;
  const KernelFiles& files_;
  KernelService& service_;
  const VerifyOptions& opt_;
  ReferenceRunner ref_;
  std::vector<std::string> prompt_warnings_;
};

}  // namespace

Result<VerifyResult> verify_kernel(const Task& task, const KernelFiles& candidate, KernelService& service,
                                   const VerifyOptions& options) {
  KernelFiles files = candidate;
  // A candidate written inside the task's folder must not carry the reference along.
  std::error_code ec;
  if (!files.root.empty() && fs::equivalent(files.root, task.dir, ec)) {
    files.files.erase("task.py");
    if (files.main_path == "task.py")
      return fail("nkia_bad_argument", "task.py is the task's reference, not a candidate kernel",
                  "give the file that holds your kernel");
  }
  Verifier v(task, files, service, options);
  return v.run();
}

}  // namespace nki_agent
