// Google Benchmark figures for verification (docs/perf.md).
//
//   BM_VerifyCached   verify_kernel() of a task's baseline — static policy, 5 seeds x every shape
//                     set in the sandbox, comparisons — with the references already in the cache
//                     and the kernel workers warm, as the agent's loop calls it. Arg: the task's
//                     index in kTasks. Goal for a Level-1 task: <= 1 s.
//   BM_StaticPolicy   check_static_policy() alone: one python3.11 process parsing the kernel.
//   BM_GenerateInput  generate_input() of a [24, 512, 1024] float32 input (12.6 M elements), normal
//                     and uniform profiles: the host's share of a large case before any kernel runs.
//   BM_CompareOutput  compare_output() of a [24, 512, 1024] float32 output within tolerance against
//                     its reference: the host's share after the kernel.
// Run: ./build/bench/bench_verify   (tasks missing from this checkout are skipped)
#include <benchmark/benchmark.h>

#include <filesystem>

#include "runtime/kernel_service.h"
#include "tasks/baseline.h"
#include "tasks/compare.h"
#include "tasks/inputs.h"
#include "tasks/static_policy.h"
#include "tasks/task.h"
#include "tasks/verify.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const char* const kTasks[] = {
    "tests/tasks/add_fp32",          // [256, 512] + ragged
    "tests/tasks/layernorm_affine",  // learned weights
    "tasks/nkibench/level1/L1_001_matmul_small_fp32",
    "tasks/nkibench/level1/L1_024_layer_norm_2d",
    "tasks/nkibench/level1/L1_083_softmax_dim1_2d",
    "tasks/nkibench/level1/L1_067_elem_add",   // [16, 512, 512] x 2 + two variants
    "tasks/nkibench/level1/L1_014_relu_fp32",  // [16, 512, 512] + two variants
};

KernelService* service() {
  static KernelService* s = [] {
    KernelServiceOptions o;
    o.workers = 0;
    o.worker_path = NKIA_WORKER_BIN;
    auto r = KernelService::create(o);
    return r ? r->release() : nullptr;
  }();
  return s;
}

void BM_VerifyCached(benchmark::State& state) {
  fs::path dir = fs::path(NKIA_SOURCE_DIR) / kTasks[state.range(0)];
  auto task = load_task(dir.string());
  if (!task) {
    state.SkipWithError(task.error().message.c_str());
    return;
  }
  auto files = load_baseline_files(*task);
  if (!files || !service()) {
    state.SkipWithError("no baseline or no kernel workers");
    return;
  }
  VerifyOptions vo;
  auto warm = verify_kernel(*task, *files, *service(), vo);  // fills the reference cache
  if (!warm || !warm->passed) {
    state.SkipWithError(warm ? warm->message.c_str() : warm.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto r = verify_kernel(*task, *files, *service(), vo);
    if (!r || !r->passed || r->reference.computed > 0) {
      state.SkipWithError("verification changed between runs");
      break;
    }
    state.counters["cases"] = r->cases_total;
  }
  state.SetLabel(task->label());
}
BENCHMARK(BM_VerifyCached)->DenseRange(0, std::size(kTasks) - 1)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_StaticPolicy(benchmark::State& state) {
  auto files = load_kernel_files((fs::path(NKIA_SOURCE_DIR) / "tests/tasks/layernorm_affine/baseline.py").string());
  if (!files) {
    state.SkipWithError(files.error().message.c_str());
    return;
  }
  PolicyOptions po;
  for (auto _ : state) {
    auto v = check_static_policy(*files, po);
    if (!v || !v->empty()) {
      state.SkipWithError("the policy checker failed");
      break;
    }
  }
}
BENCHMARK(BM_StaticPolicy)->Unit(benchmark::kMillisecond);

const Shape kLargeCase = {24, 512, 1024};

TaskArg normal_arg() {
  TaskArg a;
  a.name = "x";
  a.dtype = DType::kFloat32;
  a.shape = kLargeCase;
  a.dist = Dist::kNormal;
  return a;
}

void BM_GenerateInput(benchmark::State& state) {
  const auto profile = state.range(0) == 0 ? InputProfile::kNormal : InputProfile::kUniform;
  const TaskArg a = normal_arg();
  for (auto _ : state) benchmark::DoNotOptimize(generate_input(a, kLargeCase, 3, profile, "larger", 100));
  state.SetItemsProcessed(state.iterations() * shape_numel(kLargeCase));
  state.SetLabel(std::string(profile_name(profile)));
}
BENCHMARK(BM_GenerateInput)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_CompareOutput(benchmark::State& state) {
  const TaskArg a = normal_arg();
  const Tensor expected = generate_input(a, kLargeCase, 3, InputProfile::kNormal, "larger", 100);
  Tensor actual = expected.copy();
  float* p = actual.data_as<float>();
  for (int64_t i = 0; i < actual.numel(); i += 7) p[i] *= 1.00001f;  // within rtol 1e-4
  Tolerance tol;
  tol.atol = 1e-4;
  tol.rtol = 1e-4;
  tol.norm_rtol = 1e-3;
  for (auto _ : state) {
    auto r = compare_output(actual, expected, tol, {});
    if (!r.passed()) {
      state.SkipWithError(r.message.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * shape_numel(kLargeCase));
}
BENCHMARK(BM_CompareOutput)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
