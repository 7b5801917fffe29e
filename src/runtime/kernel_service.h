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
  // `call` (without inputs of its own) on each set of inputs, one after another in one sandboxed
  // process: the kernel's modules load afresh for each run, and the process's start, its first
  // calls into the simulator and its copied pages are paid once. `limits` are one run's; the call's
  // time limits grow with the number of runs. The outcomes are in order, up to and including the
  // first run the kernel failed (its Diagnostic; the runs after it do not happen). The outer error
  // is the call's as a whole (a sandbox verdict, a malformed reply): it names no run.
  Result<std::vector<Result<KernelOutcome>>> run_each(const KernelCall& call,
                                                      const std::vector<std::vector<Tensor>>& input_sets,
                                                      const SandboxLimits& limits);

  WorkerPool& pool() { return *pool_; }

 private:
  explicit KernelService(std::unique_ptr<WorkerPool> pool) : pool_(std::move(pool)) {}
  // The worker's reply to `call`, or the sandbox's verdict pointed at the kernel's main file.
  // Its bytes are in memory the outputs' tensors view (runtime/received_bytes.h).
  Result<std::shared_ptr<ReceivedBytes>> reply_of(const KernelCall& call, const SandboxLimits& limits);
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace nki_agent
