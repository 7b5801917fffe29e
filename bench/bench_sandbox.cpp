// Google Benchmark figures for the sandboxed runtime (docs/perf.md): the latency from "run this"
// to "here is the result" for a trivial request, which is the fixed cost every kernel run pays.
//
//   BM_RunSandboxed/seccomp:0|1   run_sandboxed() in this process: fork, confine (rlimits, fds,
//                                 handlers, and with seccomp:1 building and loading the filter),
//                                 return 1 byte, reap. The goal is <= 5 ms.
//   BM_WorkerPoolEcho/bytes:N     WorkerPool::call() on the shipped nki-agent-worker: frame over
//                                 the socket, the zygote's fork + confine + filter, N bytes back.
// Run: ./build/bench/bench_sandbox   (wall-clock times; the work is in other processes)
#include <benchmark/benchmark.h>

#include <string>

#include "runtime/sandbox.h"
#include "runtime/worker_pool.h"

namespace nki_agent {
namespace {

void BM_RunSandboxed(benchmark::State& state) {
  SandboxLimits limits;
  limits.seccomp = state.range(0) != 0;
  for (auto _ : state) {
    auto r = run_sandboxed(limits, [] { return std::string("x"); });
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->payload.data());
  }
}
BENCHMARK(BM_RunSandboxed)->ArgName("seccomp")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_WorkerPoolEcho(benchmark::State& state) {
  WorkerPoolOptions options;
  options.workers = 1;
  options.worker_path = NKIA_WORKER_BIN;
  auto pool = WorkerPool::create(options);
  if (!pool) {
    state.SkipWithError(pool.error().format().c_str());
    return;
  }
  WorkerRequest request;
  request.handler = "echo";
  request.payload.assign(static_cast<size_t>(state.range(0)), 'x');
  for (auto _ : state) {
    auto r = (*pool)->call(request);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->payload.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0) * 2);
}
BENCHMARK(BM_WorkerPoolEcho)
    ->ArgName("bytes")
    ->Arg(1)
    ->Arg(1 << 20)
    ->Arg(64 << 20)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
