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

Result<KernelOutcome> KernelService::run(const KernelCall& call, const SandboxLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  NKIA_LOG_DEBUG("kernel call: {} '{}' begins ({}, {} inputs, target {})", call.src.main_path, call.entry,
                 call.compute ? "computed" : "timing-only", call.inputs.size() + call.zero_inputs.size(),
                 call.target.empty() ? "trn1" : call.target);
  auto outcome = [&]() -> Result<KernelOutcome> {
    if (auto ok = check_call_text(call); !ok) return fail(ok.error());
    WorkerRequest req;
    req.handler = kKernelHandler;
    req.limits = limits;
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
    return decode_outcome(resp->payload);
  }();
  NKIA_LOG_DEBUG("kernel call: {} '{}' ends in {:.3f} s: {}", call.src.main_path, call.entry, seconds_since(t0),
                 outcome ? "ok" : outcome.error().code);
  return outcome;
}

}  // namespace nki_agent
