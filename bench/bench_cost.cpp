// Google Benchmark figures for the cost model (docs/perf.md): how long a timing-only profile of the
// NKI matmul tutorial's problem ([4096, 8192] @ [8192, 8192], bf16, trn1) takes, split into its two
// stages, for each of the four tutorial kernels (tests/kernels/perf/):
//
//   BM_Trace/<kernel>    the kernel run in timing-only mode, in process (no sandbox): the NKI core
//                        checks and traces every instruction (the CLI adds the sandbox's fork and
//                        the trace's trip over the wire).
//   BM_CostModel/<kernel> profile_trace on that trace: lowering, dependencies, scheduling, profile.
//   BM_Perfetto/<kernel> writing the schedule as a Perfetto trace (in memory).
// and for the 17 trn1 calibration points of data/calibration/trn1.toml (tests/kernels/calibration/):
//   BM_CostModelCalibration/<point> profile_trace on the point's trace at its measured shapes, with
//                        instructions per second and the predicted latency against the measured one.
// Goal (issue 5): a timing-only profile of that matmul in <= 10 s.
// Run: ./build/bench/bench_cost --benchmark_filter=CostModel
#include <benchmark/benchmark.h>

#include <fstream>
#include <map>
#include <sstream>

#include "cost/calibrate.h"
#include "cost/cost.h"
#include "cost/perfetto.h"
#include "runtime/python/py_host.h"
#include "tensor/tensor_spec.h"

namespace nki_agent {
namespace {

const char* const kKernels[] = {"tiled", "hoisted", "block_free", "block_all"};

Result<KernelCall> tutorial_call(const std::string& name) {
  const std::string path = std::string(NKIA_SOURCE_DIR) + "/tests/kernels/perf/matmul_" + name + ".py";
  auto files = load_kernel_files(path);
  if (!files) return fail(files.error());
  KernelCall c;
  c.src = std::move(*files);
  c.entry = "matmul_" + name;
  c.compute = false;
  c.want_outputs = false;
  c.target = "trn1";
  c.input_names = {"lhsT", "rhs"};
  c.zero_inputs = {TensorSpec{"lhsT", DType::kBFloat16, {8192, 4096}},
                   TensorSpec{"rhs", DType::kBFloat16, {8192, 8192}}};
  return c;
}

// One trace per kernel, made once.
const Trace* trace_of(const std::string& name, std::string& error) {
  static std::map<std::string, Trace> cache;
  if (auto it = cache.find(name); it != cache.end()) return &it->second;
  if (auto r = python_host_init(); !r) {
    error = r.error().format();
    return nullptr;
  }
  auto call = tutorial_call(name);
  if (!call) {
    error = call.error().format();
    return nullptr;
  }
  auto out = python_run(*call);
  if (!out) {
    error = out.error().format();
    return nullptr;
  }
  return &cache.emplace(name, std::move(out->trace)).first->second;
}

void BM_Trace(benchmark::State& state) {
  const std::string name = kKernels[state.range(0)];
  state.SetLabel(name);
  if (auto r = python_host_init(); !r) {
    state.SkipWithError(r.error().format().c_str());
    return;
  }
  auto call = tutorial_call(name);
  if (!call) {
    state.SkipWithError(call.error().format().c_str());
    return;
  }
  int64_t records = 0;
  for (auto _ : state) {
    auto out = python_run(*call);
    if (!out) {
      state.SkipWithError(out.error().format().c_str());
      break;
    }
    records = static_cast<int64_t>(out->trace.size());
  }
  state.counters["instructions"] = static_cast<double>(records);
}
BENCHMARK(BM_Trace)->DenseRange(0, 3)->Unit(benchmark::kSecond)->Iterations(1);

void BM_CostModel(benchmark::State& state) {
  const std::string name = kKernels[state.range(0)];
  state.SetLabel(name);
  std::string error;
  const Trace* trace = trace_of(name, error);
  if (!trace) {
    state.SkipWithError(error.c_str());
    return;
  }
  auto hw = hardware_for_target("trn1");
  double ms = 0;
  for (auto _ : state) {
    auto r = profile_trace(*trace, *hw);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    ms = r->profile.total_ns / 1e6;
  }
  state.counters["simulated_ms"] = ms;
  state.counters["instructions"] = static_cast<double>(trace->size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace->size()));
}
BENCHMARK(BM_CostModel)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

void BM_Perfetto(benchmark::State& state) {
  const std::string name = kKernels[state.range(0)];
  state.SetLabel(name);
  std::string error;
  const Trace* trace = trace_of(name, error);
  if (!trace) {
    state.SkipWithError(error.c_str());
    return;
  }
  auto hw = hardware_for_target("trn1");
  auto r = profile_trace(*trace, *hw);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string doc = perfetto_trace(*trace, r->program, r->schedule, *hw, {});
    bytes = doc.size();
    benchmark::DoNotOptimize(doc.data());
  }
  state.counters["mib"] = static_cast<double>(bytes) / (1 << 20);
}
BENCHMARK(BM_Perfetto)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

// The calibration points and their traces (timing-only, in process), made once.
struct CalibrationTrace {
  CalibrationPoint point;
  Trace trace;
  std::string error;
};

std::vector<CalibrationTrace>& calibration_traces() {
  static std::vector<CalibrationTrace> traces = [] {
    std::vector<CalibrationTrace> out;
    auto m = load_measurements_file(std::string(NKIA_SOURCE_DIR) + "/data/calibration/trn1.toml");
    if (!m || !python_host_init()) return out;
    for (const CalibrationPoint& p : m->points) {
      CalibrationTrace t{p, {}, {}};
      auto files = load_kernel_files(p.kernel_path);
      if (!files) {
        t.error = files.error().format();
        out.push_back(std::move(t));
        continue;
      }
      KernelCall call;
      call.src = std::move(*files);
      call.entry = p.entry;
      call.target = m->target;
      for (const auto& a : p.args) call.kwargs[a.substr(0, a.find('='))] = a.substr(a.find('=') + 1);
      std::vector<TensorSpec> specs;
      for (const auto& text : p.shapes) {
        auto spec = parse_tensor_spec(text);
        if (!spec) {
          t.error = spec.error().format();
          break;
        }
        specs.push_back(*spec);
      }
      if (!t.error.empty()) {
        out.push_back(std::move(t));
        continue;
      }
      make_timing_only(call, std::move(specs));
      auto run = python_run(call);
      if (run)
        t.trace = std::move(run->trace);
      else
        t.error = run.error().format();
      out.push_back(std::move(t));
    }
    return out;
  }();
  return traces;
}

void BM_CostModelCalibration(benchmark::State& state) {
  auto& all = calibration_traces();
  if (static_cast<size_t>(state.range(0)) >= all.size()) {
    state.SkipWithError("data/calibration/trn1.toml did not load");
    return;
  }
  const CalibrationTrace& t = all[static_cast<size_t>(state.range(0))];
  state.SetLabel(t.point.name);
  if (!t.error.empty()) {
    state.SkipWithError(t.error.c_str());
    return;
  }
  auto hw = hardware_for_target("trn1");
  double us = 0;
  for (auto _ : state) {
    auto r = profile_trace(t.trace, *hw);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    us = r->profile.total_ns / 1e3;
  }
  state.counters["predicted_us"] = us;
  state.counters["measured_us"] = t.point.measured_us;
  state.counters["instructions"] = static_cast<double>(t.trace.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(t.trace.size()));
}
BENCHMARK(BM_CostModelCalibration)->DenseRange(0, 16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nki_agent
BENCHMARK_MAIN();
