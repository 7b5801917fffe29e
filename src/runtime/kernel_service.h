// runtime/kernel_service.h — the host's way to run kernels: each call goes to a warm worker
// (nki-agent-worker, with the embedded CPython kernel host) and runs there in a sandboxed child.
//
// A kernel's own failures (an exception, a forbidden import, a missing entry) and the sandbox's
// (time, memory, crash, forbidden system call, output size) come back as Diagnostics alike. This
// is the only way the product runs kernel code: never in the host process.
#pragma once

#include <memory>

#include "core/diagnostic.h"
#include "runtime/kernel_call.h"
#include "runtime/sandbox.h"
#include "runtime/worker_pool.h"

namespace nki_agent {

// The worker handler that runs a KernelCall (registered by runtime/python/kernel_handler.h).
inline constexpr const char* kKernelHandler = "kernel";

// Defaults for one kernel run: the simulator executes every instruction on the CPU, so a
// benchmark-sized kernel takes seconds; a minute and 8 GiB bound a runaway one.
inline constexpr double kDefaultKernelSeconds = 60;
inline constexpr int64_t kDefaultKernelMemoryMiB = 8192;

struct KernelServiceOptions {
  int workers = 0;          // 0: one per hardware thread
  std::string worker_path;  // empty: $NKIA_WORKER, then nki-agent-worker beside this executable
};

class KernelService {
 public:
  static Result<std::unique_ptr<KernelService>> create(const KernelServiceOptions& options = {});

  // Thread-safe.
  Result<KernelOutcome> run(const KernelCall& call, const SandboxLimits& limits);

  WorkerPool& pool() { return *pool_; }

 private:
  explicit KernelService(std::unique_ptr<WorkerPool> pool) : pool_(std::move(pool)) {}
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace nki_agent
