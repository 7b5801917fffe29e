#include "runtime/kernel_service.h"

namespace nki_agent {

Result<std::unique_ptr<KernelService>> KernelService::create(const KernelServiceOptions& options) {
  WorkerPoolOptions po;
  po.workers = options.workers;
  po.worker_path = options.worker_path;
  auto pool = WorkerPool::create(po);
  if (!pool) return fail(pool.error());
  return std::unique_ptr<KernelService>(new KernelService(std::move(*pool)));
}

Result<KernelOutcome> KernelService::run(const KernelCall& call, const SandboxLimits& limits) {
  WorkerRequest req;
  req.handler = kKernelHandler;
  req.payload = encode_call(call);
  req.limits = limits;
  auto resp = pool_->call(req);
  if (!resp) {
    Diagnostic d = resp.error();
    // Sandbox verdicts concern the kernel as a whole: point them at its main file.
    if (!d.loc.known() && !call.src.main_path.empty())
      d.at({call.src.root.empty() ? call.src.main_path : call.src.root + "/" + call.src.main_path, 0, 0});
    return fail(std::move(d));
  }
  return decode_outcome(resp->payload);
}

}  // namespace nki_agent
