#include "runtime/kernel_service.h"

#include <fmt/format.h>
#include <algorithm>

#include "core/clock.h"
#include "core/log.h"
#include "core/utf8.h"

namespace nki_agent {

namespace {

// A call travels as JSON text: every string in it must be UTF-8. Names and values given on a
// command line or read from a folder may not be; they are the caller's error, named here.
Result<void> check_call_text(const KernelCall& call) {
  auto bad = [](const std::string& what, const std::string& text) {
    return fail("nkia_not_utf8", fmt::format("{} is not UTF-8 text: '{}'", what, escape_invalid_utf8(text)),
                "give names and values as UTF-8 (an input's name is its .npy file's name)");
  };
  if (!is_utf8(call.entry)) return bad("the entry name", call.entry);
  if (!is_utf8(call.target)) return bad("the target", call.target);
  if (!is_utf8(call.src.root)) return bad("the kernel's folder", call.src.root);
  if (!is_utf8(call.src.main_path)) return bad("the kernel's file name", call.src.main_path);
  for (const auto& [path, src] : call.src.files) {
    if (!is_utf8(path)) return bad("a kernel file's name", path);
    if (size_t at = invalid_utf8_offset(src); at != std::string::npos)
      return fail(Diagnostic::error("nkia_not_utf8",
                                    fmt::format("byte 0x{:02x} is not UTF-8", static_cast<unsigned char>(src[at])),
                                    "kernel sources are UTF-8 text")
                      .at(text_location(src, at, path)));
  }
  for (const auto& [name, value] : call.kwargs) {
    if (!is_utf8(name)) return bad("an argument's name", name);
    if (!is_utf8(value)) return bad(fmt::format("the value of argument '{}'", name), value);
  }
  for (const auto& name : call.input_names)
    if (!is_utf8(name)) return bad("an input's name", name);
  for (const auto& spec : call.zero_inputs)
    if (!is_utf8(spec.name)) return bad("an input's name", spec.name);
  return {};
}

}  // namespace

Result<std::unique_ptr<KernelService>> KernelService::create(const KernelServiceOptions& options) {
  WorkerPoolOptions po;
  po.workers = options.workers;
  po.worker_path = options.worker_path;
  auto pool = WorkerPool::create(po);
  if (!pool) return fail(pool.error());
  return std::unique_ptr<KernelService>(new KernelService(std::move(*pool)));
}

Result<std::shared_ptr<ReceivedBytes>> KernelService::reply_of(const KernelCall& call, const SandboxLimits& limits) {
  if (auto ok = check_call_text(call); !ok) return fail(ok.error());
  WorkerRequest req;
  req.handler = kKernelHandler;
  req.limits = limits;
  req.payload_in_memory = true;
  // Large inputs cross as sealed shared memory (a copy at most, none when they live there already).
  const bool large = std::any_of(call.inputs.begin(), call.inputs.end(), [](const Tensor& t) {
    return t.defined() && (t.nbytes() >= kShareInputBytes || t.storage()->external());
  });
  if (large) {
    KernelCall shared = call;
    auto attachments = share_large_inputs(shared);
    if (!attachments) return fail(attachments.error());
    req.attachments = std::move(*attachments);
    req.payload = encode_call(shared, req.attachments);
  } else {
    req.payload = encode_call(call);
  }
  auto resp = pool_->call(req);
  if (!resp) {
    Diagnostic d = resp.error();
    // Sandbox verdicts concern the kernel as a whole: point them at its main file.
    if (!d.loc.known() && !call.src.main_path.empty())
      d.at({call.src.root.empty() ? call.src.main_path : call.src.root + "/" + call.src.main_path, 0, 0});
    return fail(std::move(d));
  }
  if (!resp->payload_memory)
    return fail(Diagnostic::error("nkia_worker_protocol", "a worker's reply came without its payload",
                                  "this is a bug in nki-agent; please report it"));
  return std::move(resp->payload_memory);
}

Result<KernelOutcome> KernelService::run(const KernelCall& call, const SandboxLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  NKIA_LOG_DEBUG("kernel call: {} '{}' begins ({}, {} inputs, target {})", call.src.main_path, call.entry,
                 call.compute ? "computed" : "timing-only", call.inputs.size() + call.zero_inputs.size(),
                 call.target.empty() ? "trn1" : call.target);
  auto outcome = [&]() -> Result<KernelOutcome> {
    if (call.runs != 1) return fail("nkia_bad_argument", "KernelService::run takes a call of one run; use run_each");
    auto reply = reply_of(call, limits);
    if (!reply) return fail(reply.error());
    return decode_outcome((*reply)->view(), *reply);
  }();
  NKIA_LOG_DEBUG("kernel call: {} '{}' ends in {:.3f} s: {}", call.src.main_path, call.entry, seconds_since(t0),
                 outcome ? "ok" : outcome.error().code);
  return outcome;
}

Result<std::vector<Result<KernelOutcome>>> KernelService::run_each(const KernelCall& call,
                                                                   const std::vector<std::vector<Tensor>>& input_sets,
                                                                   const SandboxLimits& limits) {
  if (input_sets.empty() || input_sets.size() > static_cast<size_t>(kMaxRunsPerCall) || !call.inputs.empty() ||
      call.runs != 1 || !call.zero_inputs.empty())
    return fail(
        "nkia_bad_argument",
        fmt::format("run_each takes 1 to {} sets of inputs and a call without inputs of its own", kMaxRunsPerCall));
  const auto t0 = std::chrono::steady_clock::now();
  KernelCall all = call;
  all.runs = static_cast<int>(input_sets.size());
  for (const auto& set : input_sets) {
    if (set.size() != input_sets.front().size())
      return fail("nkia_bad_argument", "run_each's sets of inputs differ in length");
    all.inputs.insert(all.inputs.end(), set.begin(), set.end());
  }
  // The limits of one run, for each: the call's time grows with its runs (its memory does not: each
  // run's outputs are encoded and freed before the next begins).
  SandboxLimits lim = limits;
  lim.wall_seconds = std::min(kMaxLimitSeconds, limits.wall_seconds * all.runs);
  lim.cpu_seconds = std::min(kMaxLimitSeconds, limits.cpu_seconds * all.runs);
  NKIA_LOG_DEBUG("kernel call: {} '{}' begins ({} runs, {} inputs each, target {})", call.src.main_path, call.entry,
                 all.runs, input_sets.front().size(), call.target.empty() ? "trn1" : call.target);
  auto outcomes = [&]() -> Result<std::vector<Result<KernelOutcome>>> {
    auto reply = reply_of(all, lim);
    if (!reply) return fail(reply.error());
    if (all.runs == 1) return std::vector<Result<KernelOutcome>>{decode_outcome((*reply)->view(), *reply)};
    return decode_run_outcomes((*reply)->view(), all.runs, *reply);
  }();
  NKIA_LOG_DEBUG("kernel call: {} '{}' ends in {:.3f} s: {}", call.src.main_path, call.entry, seconds_since(t0),
                 outcomes ? fmt::format("{} of {} runs", outcomes->size(), all.runs) : outcomes.error().code);
  return outcomes;
}

}  // namespace nki_agent
