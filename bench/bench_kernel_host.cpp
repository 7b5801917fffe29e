// Google Benchmark figures for the kernel host (docs/perf.md).
//
//   BM_TrivialKernelRoundTrip   KernelService::run() of `return a` on an [n, n] float32 input
//                               through nki-agent-worker: encode, socket, fork of the warm Python
//                               zygote, confine, load the kernel from memory, call, encode the
//                               output, reap, decode. Goal: <= 5 ms fork-to-result.
//   BM_BindingCalls             calls per second from kernel Python into the C++ core for a cheap
//                               operation (an HBM tensor's `ndim`), measured inside the kernel in
//                               this process. Goal: >= 500k calls/s per core.
//   BM_ConvRun                  one run of a convolution's ~11,000 small matmuls, in Python (mode:0)
//                               or replayed from a recording (mode:1), in this process.
// Run: ./build/bench/bench_kernel_host
#include <benchmark/benchmark.h>

#include "runtime/kernel_service.h"
#include "runtime/python/py_host.h"
#include "runtime/python/replay.h"
#include "tensor/rng.h"

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

// One run of Level 1's conv2d_k7_s2 baseline (tasks/nkibench, L1_060) on x [2, 3, 224, 224]: about
// 11,000 small matmuls and their views, issued by the kernel's Python (mode:0, python_run) or
// replayed from a recording of another run of the same shapes (mode:1, runtime/python/replay.h).
void BM_ConvRun(benchmark::State& state) {
  if (auto r = python_host_init(); !r) {
    state.SkipWithError(r.error().format().c_str());
    return;
  }
  auto files =
      load_kernel_files(std::string(NKIA_SOURCE_DIR) + "/tasks/nkibench/level1/L1_060_conv2d_k7_s2/baseline.py");
  if (!files) {
    state.SkipWithError(files.error().format().c_str());
    return;
  }
  KernelCall c;
  c.src = std::move(*files);
  c.entry = "kernel";
  c.kernel_only = true;
  c.collect_trace = false;
  c.runs = 2;
  for (uint64_t seed : {1, 2}) {
    Rng rng(seed, 0);
    c.inputs.push_back(random_normal({2, 3, 224, 224}, DType::kFloat32, rng));
    c.inputs.push_back(random_normal({64, 3, 7, 7}, DType::kFloat32, rng));
    c.inputs.push_back(random_normal({64}, DType::kFloat32, rng));
  }
  Recording rec;
  if (auto r = python_run(call_of_run(c, 0), &rec); !r || !rec.replayable()) {
    state.SkipWithError(r ? rec.why_not().c_str() : r.error().format().c_str());
    return;
  }
  const KernelCall run = call_of_run(c, 1);
  const bool replay = state.range(0) == 1;
  for (auto _ : state) {
    std::vector<Diagnostic> raised;
    const bool ok = replay ? rec.replay(run, raised).has_value() : python_run(run).has_value();
    if (!ok) {
      state.SkipWithError("the run failed");
      break;
    }
  }
  state.counters["instructions"] = static_cast<double>(rec.instructions());
}
BENCHMARK(BM_ConvRun)->ArgName("mode")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
