// The verification pipeline (tasks/verify.h).
#include "tasks/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "core/clock.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "nki/error_catalogue.h"
#include "tasks/input_cache.h"
#include "tasks/inputs.h"
#include "tasks/verify_check.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

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

// "file:line: error[code]: message" (or warning): a Diagnostic's first line, without its column,
// hint and notes.
std::string headline(const Diagnostic& d) {
  Diagnostic head = d;
  head.loc.col = 0;
  head.hint.clear();
  head.notes.clear();
  return head.format();
}

std::string name_of(VerifyCheck check) {
  return std::string(check_name(check));
}

}  // namespace

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
    Tensor t = InputCache::process().input(a, set.args[i], seed, profile, set.name, task.large_scale);
    ci.forward_inputs.push_back(t);
    ci.kernel_args.push_back(std::move(t));
  }
  return ci;
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
  if (from_result_cache) {
    j["from_result_cache"] = true;
    j["verified_seconds"] = verified_seconds;
  }
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
    if (diagnostic && check == check_name(VerifyCheck::kKernelError))
      for (const auto& n : diagnostic->notes) s += "  note: " + n + "\n";
    for (size_t i = 1; i < violations.size() && i < 10; ++i)
      s += fmt::format("  also {}:{}: [{}] {}\n", violations[i].file, violations[i].line, violations[i].rule,
                       violations[i].message);
    if (check != check_name(VerifyCheck::kStaticPolicy))
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
  if (from_result_cache) {
    s += fmt::format("  answered from the result cache in {:.3f} s (the verification took {:.2f} s)\n", seconds,
                     verified_seconds);
    return s;
  }
  s += fmt::format("  reference results: {} from the cache, {} computed; verify took {:.2f} s\n", reference.cached,
                   reference.computed, seconds);
  return s;
}

namespace {

// Cases share a kernel process (Verifier::run_cases) when each case's inputs and outputs stay under
// kBatchCaseBytes; a process takes at most kBatchRuns cases and kBatchBytes in all, so its reply (the
// outputs of all its runs) stays within the sandbox's 256 MiB. Large cases gain too: a process's
// start and its copy-on-write faults of the zygote's pages cost tens of milliseconds each (L1_071's
// 21 cases: 8.5 -> 6.3 s of CPU when its 50 MB cases stopped running alone). Larger ones run alone.
constexpr int64_t kBatchCaseBytes = int64_t{128} << 20;
constexpr int64_t kBatchBytes = int64_t{256} << 20;
constexpr int64_t kBatchRuns = 16;
// What a case costs beyond its bytes (its run's start, the comparison's setup, its share of the
// process), in the bytes of inputs and outputs that cost as much: L1_084's processes of 10 cases
// took 0.38 s for 26 MB and 1.04 s for 226 MB, about 3.3 ms per MB and 14 ms per case.
constexpr int64_t kCaseWorkBytes = int64_t{4} << 20;

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

  // A case's inputs, drawn (or taken from the process's input cache) before the candidate runs.
  struct Prepared {
    CaseInputs in;
    std::string where;  // "at the prompt shapes (x=[...]), seed 3 (normal inputs)"
  };

  CaseResult fresh_result(const Case& c) const {
    CaseResult r;
    r.index = c.index;
    r.shape_set = c.set->name;
    r.seed = c.seed;
    r.profile = c.timing_only ? "none" : std::string(profile_name(c.profile));
    r.ran = true;
    r.timing_only = c.timing_only;
    return r;
  }

  Result<Prepared> prepare(const Case& c) {
    auto params = ref_.params(c.seed);
    if (!params) return fail(params.error());
    Prepared p;
    p.in = make_case_inputs(task_, *c.set, c.seed, c.profile, *params);
    p.where = fmt::format("at the {} shapes ({}), seed {} ({} inputs)", c.set->name, describe_set(task_, *c.set),
                          c.seed, profile_name(c.profile));
    return p;
  }

  // The candidate's call, without inputs: a candidate has no host side, so it never sees values.
  KernelCall candidate_call(const Prepared& p) const {
    KernelCall call;
    call.src = files_;
    call.entry = task_.entry;
    call.kernel_only = true;
    call.input_names = p.in.names;
    call.target = task_.target;
    call.collect_trace = false;
    return call;
  }

  // The candidate's result on one case; a Result error is the machinery's failure.
  Result<CaseResult> run_case(const Case& c) {
    if (c.timing_only) return run_timing_only(c, fresh_result(c));
    auto p = prepare(c);
    if (!p) return fail(p.error());
    KernelCall call = candidate_call(*p);
    call.inputs = p->in.kernel_args;
    NKIA_LOG_DEBUG("verify {}: case {} {}", task_.label(), c.index, p->where);
    auto t0 = std::chrono::steady_clock::now();
    auto outcome = service_.run(call, limits());
    return judge(c, *p, std::move(outcome), seconds_since(t0));
  }

  // The candidate's results on several cases, computed in one kernel process
  // (KernelService::run_each): one per case, in order. A case after one the kernel failed on is
  // not run by that process; with fail_fast it is left unrun, else it runs in the next. When the
  // process as a whole is stopped (time, memory, a crash), which case did it is not known: each
  // then runs alone, as run_case.
  Result<std::vector<CaseResult>> run_cases(const std::vector<const Case*>& batch) {
    std::vector<CaseResult> results;
    size_t next = 0;
    while (next < batch.size()) {
      std::vector<Prepared> prepared;
      std::vector<std::vector<Tensor>> sets;
      for (size_t i = next; i < batch.size(); ++i) {
        auto p = prepare(*batch[i]);
        if (!p) return fail(p.error());
        sets.push_back(p->in.kernel_args);
        prepared.push_back(std::move(*p));
      }
      NKIA_LOG_DEBUG("verify {}: {} case(s) in one process, from case {} ({} shapes)", task_.label(),
                     batch.size() - next, batch[next]->index, batch[next]->set->name);
      auto t0 = std::chrono::steady_clock::now();
      auto outcomes = service_.run_each(candidate_call(prepared.front()), sets, limits());
      const double seconds = seconds_since(t0);
      if (!outcomes) {
        if (is_infrastructure_failure(outcomes.error())) return fail(outcomes.error());
        for (size_t i = next; i < batch.size(); ++i) {
          if (opt_.fail_fast && i > next && !results.empty() && !results.back().passed) break;
          auto r = run_case(*batch[i]);
          if (!r) return fail(r.error());
          results.push_back(std::move(*r));
        }
        return results;
      }
      const size_t ran = outcomes->size();
      for (size_t k = 0; k < ran; ++k) {
        auto r = judge(*batch[next + k], prepared[k], std::move((*outcomes)[k]), seconds / static_cast<double>(ran));
        if (!r) return fail(r.error());
        results.push_back(std::move(*r));
      }
      next += ran;
      if (opt_.fail_fast && !results.back().passed) break;
    }
    return results;
  }

  // One case's verdict from the candidate's run (`seconds` of wall time): the kernel's failure,
  // the structure of its outputs, then the comparison with the reference. The reference of the
  // case is computed or read only here, after the candidate ran.
  Result<CaseResult> judge(const Case& c, Prepared& p, Result<KernelOutcome> ran, double seconds) {
    CaseResult r = fresh_result(c);
    r.kernel_seconds = seconds;
    if (!ran) {
      if (auto ok = kernel_failed(ran.error(), p.where, r); !ok) return fail(ok.error());
      return r;
    }
    const KernelOutcome& outcome = *ran;
    const CaseInputs& in = p.in;
    const std::string& where = p.where;
    keep_warnings(c, outcome);
    const auto& outs = outcome.outputs;
    std::vector<TensorSpec> specs;
    for (const auto& o : outs) specs.push_back(TensorSpec{"", o.dtype(), o.shape()});
    if (structure_fails(specs, *c.set, where, r)) {
      // A task whose toml disagrees with its own reference is the task's fault, not the kernel's.
      if (r.check == check_name(VerifyCheck::kOutputShape))
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
    for (const Diagnostic& w : outcome.warnings)
      if (w.code == "nkia_uninitialized_read" && uninit == nullptr) uninit = &w;
    for (size_t k = 0; k < outs.size(); ++k) {
      const OutputStores* stores = k < outcome.output_stores.size() ? &outcome.output_stores[k] : nullptr;
      OutputCheck oc =
          compare_output(outs[k], (*expected)[k], task_.tolerance_for(task_.outputs[k].dtype), in.kernel_args, stores);
      if (oc.check == check_name(VerifyCheck::kMismatch) && oc.stored_nan > 0 && uninit != nullptr) {
        oc.check = name_of(VerifyCheck::kUninitializedRead);
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
    for (const Diagnostic& w : outcome.warnings)
      prompt_warnings_.push_back(headline(w) + (w.hint.empty() ? "" : " (hint: " + w.hint + ")"));
  }

  // Output count, shapes and dtypes; true (with r's check and message set) when they are wrong.
  bool structure_fails(const std::vector<TensorSpec>& outs, const ShapeSet& set, const std::string& where,
                       CaseResult& r) {
    if (outs.size() != task_.outputs.size()) {
      r.check = name_of(VerifyCheck::kOutputCount);
      r.message = fmt::format("the kernel returned {} output(s) {}; the task expects {}", outs.size(), where,
                              task_.outputs.size());
      return true;
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      if (outs[k].shape != set.outputs[k]) {
        r.check = name_of(VerifyCheck::kOutputShape);
        r.message = fmt::format("output {} has shape {} {}; expected {}", k, shape_str(outs[k].shape), where,
                                shape_str(set.outputs[k]));
        return true;
      }
      if (outs[k].dtype != task_.outputs[k].dtype) {
        r.check = name_of(VerifyCheck::kOutputDtype);
        r.message =
            fmt::format("output {} is {}; the task requires {}{}", k, dtype_name(outs[k].dtype),
                        dtype_name(task_.outputs[k].dtype), narrower_note(outs[k].dtype, task_.outputs[k].dtype));
        return true;
      }
    }
    return false;
  }

  // The candidate's run in the sandbox, its wall time in r.kernel_seconds. The kernel's own failure
  // is r's check (kernel_error) and no outcome; a failure of the machinery is the Result error.
  Result<std::optional<KernelOutcome>> run_candidate(const KernelCall& call, const std::string& where, CaseResult& r) {
    NKIA_LOG_DEBUG("verify {}: case {} {}", task_.label(), r.index, where);
    auto t0 = std::chrono::steady_clock::now();
    auto outcome = service_.run(call, limits());
    r.kernel_seconds = seconds_since(t0);
    if (outcome) return std::optional<KernelOutcome>(std::move(*outcome));
    if (auto ok = kernel_failed(outcome.error(), where, r); !ok) return fail(ok.error());
    return std::optional<KernelOutcome>();
  }

  // The kernel's own failure `d` as r's check (kernel_error); nki-agent's failure (the worker, the
  // sandbox's setup) as the error: the verification's, never the candidate's.
  Result<void> kernel_failed(const Diagnostic& d, const std::string& where, CaseResult& r) const {
    if (is_infrastructure_failure(d)) return fail(d);
    r.check = name_of(VerifyCheck::kKernelError);
    r.kernel_error = d;
    r.message = fmt::format("the kernel failed {}: {}", where, headline(d));
    return {};
  }

  // Every run's limits: verified outputs of a few hundred MiB, or a trace, come back.
  SandboxLimits limits() const {
    return SandboxLimits::for_kernel(opt_.kernel_seconds, opt_.kernel_memory_mib, /*large_reply=*/true);
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
    std::vector<TensorSpec> shapes;
    for (size_t i = 0; i < task_.args.size(); ++i)
      shapes.push_back(TensorSpec{task_.args[i].name, task_.args[i].dtype, c.set->args[i]});
    make_timing_only(call, std::move(shapes));
    call.collect_trace = false;  // only the checks and the output specs matter here
    auto ran = run_candidate(call, where, r);
    if (!ran) return fail(ran.error());
    if (!*ran) return r;
    const std::optional<KernelOutcome>& outcome = *ran;
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

  // The cases after the first, as the kernel processes that run them: cases whose inputs and
  // outputs are small run several to a process (run_cases), dealt out a shape set after another (a
  // process replays its first run of a shape set on its others, without the kernel's Python:
  // runtime/python/replay.h) over at least `parallel` processes, each process's cases in case order;
  // large and timing-only cases run one to a process. Batches come in order of their first case.
  std::vector<std::vector<const Case*>> plan_batches(const std::vector<const Case*>& rest, int parallel) const {
    std::vector<std::vector<const Case*>> batches;
    std::vector<const Case*> small;
    for (const Case* c : rest) {
      auto [in, out] = set_bytes(task_, *c->set);
      if (c->timing_only || in + out > kBatchCaseBytes)
        batches.push_back({c});
      else
        small.push_back(c);
    }
    std::stable_sort(small.begin(), small.end(),
                     [](const Case* a, const Case* b) { return std::less<const ShapeSet*>()(a->set, b->set); });
    // As few processes as the limits allow, a multiple of `parallel` of them, cut from the order
    // above into runs of about the same work each (a case's inputs and outputs plus a fixed share
    // for what any case costs): the processes run side by side, and the verification waits for
    // the last one. Counting cases instead left one process with every large case.
    const int64_t max_shared = static_cast<int64_t>(kMaxAttachmentsPerCall) - 1;
    auto shared_of = [&](const Case* c) {  // inputs that cross as shared memory: each may be its own buffer
      int64_t shared = 0;
      for (size_t i = 0; i < task_.args.size(); ++i)
        shared += shape_numel(c->set->args[i]) * dtype_size(task_.args[i].dtype) >= kShareInputBytes;
      return shared;
    };
    auto bytes_of = [&](const Case* c) {
      auto [in, out] = set_bytes(task_, *c->set);
      return in + out;
    };
    auto work_of = [&](const Case* c) { return bytes_of(c) + kCaseWorkBytes; };
    int64_t total_bytes = 0, total_shared = 0, total_work = 0, max_work = 0;
    for (const Case* c : small) {
      total_bytes += bytes_of(c);
      total_shared += shared_of(c);
      total_work += work_of(c);
      max_work = std::max(max_work, work_of(c));
    }
    const auto n = static_cast<int64_t>(small.size());
    int64_t k = std::max<int64_t>({1, (n + kBatchRuns - 1) / kBatchRuns, (total_bytes + kBatchBytes - 1) / kBatchBytes,
                                   (total_shared + max_shared - 1) / max_shared});
    k = std::min<int64_t>(n, (k + parallel - 1) / parallel * parallel);
    // The cases in order, a new process whenever the next case would take this one's work past
    // `most` or break a limit.
    auto cut = [&](int64_t most) {
      std::vector<std::vector<const Case*>> out;
      std::vector<const Case*> cur;
      int64_t cur_bytes = 0, cur_shared = 0, cur_work = 0;
      for (const Case* c : small) {
        if (!cur.empty() && (cur_work + work_of(c) > most || cur.size() >= static_cast<size_t>(kBatchRuns) ||
                             cur_bytes + bytes_of(c) > kBatchBytes || cur_shared + shared_of(c) > max_shared)) {
          out.push_back(std::move(cur));
          cur.clear();
          cur_bytes = cur_shared = cur_work = 0;
        }
        cur.push_back(c);
        cur_bytes += bytes_of(c);
        cur_shared += shared_of(c);
        cur_work += work_of(c);
      }
      if (!cur.empty()) out.push_back(std::move(cur));
      return out;
    };
    // The least work per process that needs no more than k of them (bisection: fewer processes
    // the more each may take); when the limits alone need more than k, each takes what they allow.
    int64_t lo = max_work, hi = std::max(max_work, total_work);
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<int64_t>(cut(mid).size()) <= k)
        hi = mid;
      else
        lo = mid + 1;
    }
    for (auto& b : cut(lo)) batches.push_back(std::move(b));
    for (auto& b : batches)
      std::sort(b.begin(), b.end(), [](const Case* x, const Case* y) { return x->index < y->index; });
    std::sort(batches.begin(), batches.end(),
              [](const auto& a, const auto& b) { return a.front()->index < b.front()->index; });
    return batches;
  }

  Result<VerifyResult> run() {
    auto t0 = std::chrono::steady_clock::now();
    VerifyResult res;
    res.task = task_.label();
    res.kernel = (fs::path(files_.root) / files_.main_path).string();
    NKIA_LOG_INFO("verify {}: {} begins", res.task, res.kernel);

    if (opt_.static_policy) {
      PolicyOptions po = opt_.policy;
      po.forbidden_dtypes = task_.forbidden_dtypes();
      auto v = check_static_policy(files_, po);
      if (!v) return fail(v.error());
      if (!v->empty()) {
        res.violations = *v;
        res.check = name_of(VerifyCheck::kStaticPolicy);
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
      (in > opt_.max_compute_bytes || out > opt_.max_compute_output_bytes ? timing_only : computed).push_back(&s);
    }
    if (computed.empty())
      return fail("nkia_task_too_large",
                  fmt::format("{}: every shape set exceeds {} MiB of inputs or {} MiB of outputs; nothing can be "
                              "computed on the simulator, so correctness cannot be verified",
                              task_.label(), opt_.max_compute_bytes >> 20, opt_.max_compute_output_bytes >> 20),
                  "give the task a variant small enough to compute (this is the task's fault, not the kernel's)");
    // The task's case plan: past its first prompt_seeds seeds, the prompt's shapes are left to the
    // variants (when some variant is computed at all).
    const bool prompt_limited = task_.prompt_seeds > 0 && computed.size() > 1;
    std::vector<Case> cases;
    for (int i = 0; i < nseeds; ++i) {
      for (const ShapeSet* s : computed)
        if (!(prompt_limited && i >= task_.prompt_seeds && s->name == "prompt"))
          cases.push_back({static_cast<int>(cases.size()), s, opt_.seed_base + static_cast<uint64_t>(i),
                           profile_for_seed(task_, i), false});
      if (i == 0)
        for (const ShapeSet* s : timing_only)
          cases.push_back({static_cast<int>(cases.size()), s, opt_.seed_base, InputProfile::kNormal, true});
    }
    res.cases_total = static_cast<int>(cases.size());
    NKIA_LOG_DEBUG("verify {}: {} case(s): {} shape set(s) computed, {} timing-only, {} seed(s)", res.task,
                   cases.size(), computed.size(), timing_only.size(), nseeds);
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
    auto keep = [&](int index, Result<CaseResult> r) {
      std::lock_guard<std::mutex> lock(mu);
      if (!r) {
        if (!infra || infra->first > index) infra = std::make_pair(index, r.error());
        first_failure = std::min(first_failure.load(), index);
        return;
      }
      if (!r->passed) first_failure = std::min(first_failure.load(), index);
      res.cases[static_cast<size_t>(r->index)] = std::move(*r);
    };
    auto run_batch = [&](const std::vector<const Case*>& batch) {
      std::vector<const Case*> left;
      for (const Case* c : batch)
        if (!(opt_.fail_fast && c->index > first_failure.load())) left.push_back(c);
      if (left.empty()) return;
      if (left.size() == 1) return keep(left[0]->index, run_case(*left[0]));
      auto rs = run_cases(left);
      if (!rs) return keep(left[0]->index, fail(rs.error()));
      for (auto& r : *rs) keep(r.index, std::move(r));
    };
    // The speed of a candidate whose first case passed is measured beside its other cases (and
    // dropped if one of them fails).
    std::optional<SpeedResult> speed;
    if (!cases.empty()) keep(0, run_case(cases[0]));
    if (cases.size() > 1 && !(opt_.fail_fast && first_failure.load() == 0)) {
      int parallel = opt_.parallel > 0 ? opt_.parallel : service_.pool().size();
      std::vector<const Case*> rest;
      for (size_t i = 1; i < cases.size(); ++i) rest.push_back(&cases[i]);
      const auto batches = plan_batches(rest, std::max(1, parallel));
      const int64_t early = first_failure.load() != 0 ? 1 : 0;
      const auto jobs = static_cast<int64_t>(batches.size()) + early;
      ThreadPool pool(static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(parallel, jobs))));
      pool.parallel_for(jobs, [&](int64_t i) {
        if (i < early)
          speed = measure_speed(task_, files_, service_, opt_.speed, limits());
        else
          run_batch(batches[static_cast<size_t>(i - early)]);
      });
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
          const auto check = check_by_name(c.check);
          NKIA_ASSERT(check.has_value());
          Diagnostic d = nki_error(check_code(*check), c.message);  // the table's hint
          d.at(SourceLoc{res.kernel, 0, 0});
          res.diagnostic = d;
        }
        break;
      }
    }
    if (res.passed)
      res.speed = speed ? std::move(*speed) : measure_speed(task_, files_, service_, opt_.speed, limits());
    else
      res.speed.reason = "the kernel did not pass";
    res.reference = ref_.stats();
    res.seconds = seconds_since(t0);
    NKIA_LOG_INFO("verify {}: {} in {:.3f} s ({} of {} cases passed)", res.task,
                  res.passed ? "passed" : "failed " + res.check, res.seconds, res.cases_passed, res.cases_total);
    return res;
  }

 private:
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
