// Google Benchmark figures for the kernel host (docs/perf.md).
//
//   BM_TrivialKernelRoundTrip   KernelService::run() of `return a` on an [n, n] float32 input
//                               through nki-agent-worker: encode, socket, fork of the warm Python
//                               zygote, confine, load the kernel from memory, call, encode the
//                               output, reap, decode. Goal: <= 5 ms fork-to-result.
//   BM_BindingCalls             calls per second from kernel Python into the C++ core for a cheap
//                               operation (an HBM tensor's `ndim`), measured inside the kernel in
//                               this process. Goal: >= 500k calls/s per core.
// Run: ./build/bench/bench_kernel_host
#include <benchmark/benchmark.h>

#include "runtime/kernel_service.h"
#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

// Arg: elements per side of the float32 input ([n, n]).
void BM_TrivialKernelRoundTrip(benchmark::State& state) {
  KernelServiceOptions o;
  o.workers = 1;
  o.worker_path = NKIA_WORKER_BIN;
  auto service = KernelService::create(o);
  if (!service) {
    state.SkipWithError(service.error().format().c_str());
    return;
  }
  KernelCall c;
  c.src = kernel_files_from_source("import nki\n\n@nki.jit\ndef entry(a):\n    return a\n");
  c.entry = "entry";
  c.inputs = {Tensor::full({state.range(0), state.range(0)}, DType::kFloat32, 1.5)};
  SandboxLimits limits;
  for (auto _ : state) {
    auto r = (*service)->run(c, limits);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->outputs.data());
  }
}
BENCHMARK(BM_TrivialKernelRoundTrip)->ArgName("n")->Arg(2)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same trivial call as BM_TrivialKernelRoundTrip, in this process: the share of the round trip
// spent in Python (loading the kernel from memory, converting the arrays, calling).
void BM_TrivialKernelInProcess(benchmark::State& state) {
  if (auto r = python_host_init(); !r) {
    state.SkipWithError(r.error().format().c_str());
    return;
  }
  KernelCall c;
  c.src = kernel_files_from_source("import nki\n\n@nki.jit\ndef entry(a):\n    return a\n");
  c.entry = "entry";
  c.inputs = {Tensor::full({128, 512}, DType::kFloat32, 1.5)};
  for (auto _ : state) {
    auto r = python_run(c);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->outputs.data());
  }
}
BENCHMARK(BM_TrivialKernelInProcess)->Unit(benchmark::kMillisecond);

void BM_BindingCalls(benchmark::State& state) {
  if (auto r = python_host_init(); !r) {
    state.SkipWithError(r.error().format().c_str());
    return;
  }
  KernelCall c;
  c.src = kernel_files_from_source(
      "import time\n"
      "import numpy as np\n"
      "import nki\n"
      "N = 200_000\n"
      "rate = []\n"
      "@nki.jit\n"
      "def k(a):\n"
      "    t0 = time.perf_counter()\n"
      "    for _ in range(N):\n"
      "        a.ndim\n"
      "    rate.append(N / (time.perf_counter() - t0))\n"
      "    return a\n"
      "def entry(a):\n"
      "    k(a)\n"
      "    return np.float32(rate[-1])\n");
  c.entry = "entry";
  c.inputs = {Tensor::full({2, 2}, DType::kFloat32, 1)};
  double rate = 0;
  for (auto _ : state) {
    auto r = python_run(c);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    rate = r->outputs[0].item();
  }
  state.counters["calls_per_s"] = rate;
}
BENCHMARK(BM_BindingCalls)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
