// Google Benchmark figures for the NKI instruction core (docs/perf.md): how fast the simulator
// executes kernels, against NumPy computing the same result in the same embedded interpreter.
//
//   BM_InstructionRate     a kernel issuing many small instructions (tensor_scalar on [128, 1]
//                          tiles): simulated instructions per second ("items_per_second").
//   BM_Softmax             row softmax of a float32 [4096, 4096] input, current dialect, 128-row
//                          tiles: max, exp with a per-row bias, row sum, reciprocal, scale.
//   BM_SoftmaxNumPy        the same result with NumPy (float32) in a host function.
//   BM_Matmul              float32 [2048, 2048] x [2048, 2048] (lhsT given), 128 x 128 x 512
//                          tiles accumulated in PSUM over K, blocked loads.
//   BM_MatmulNumPy         lhsT.T @ rhs with NumPy (OpenBLAS).
// Goal (issue 4): matmul-dominated kernels within 3x of NumPy.
// Run: ./build/bench/bench_nki --benchmark_filter='Softmax|Matmul'
#include <benchmark/benchmark.h>

#include "runtime/python/py_host.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

constexpr const char* kKernels = R"py(
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def many_small(x, n):
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    for i in range(n):
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=1.0001, op1=nl.add, operand1=0.5)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def softmax(x):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        tile = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
        neg_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=tile, axis=1, negate=True, keepdims=True)
        e = nl.ndarray((128, F), dtype=nl.float32, buffer=nl.sbuf)
        total = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=e, op=nl.exp, data=tile, bias=neg_max, reduce_op=nl.add, reduce_res=total)
        inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        nisa.tensor_scalar(dst=e, data=e, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=e)
    return out


def softmax_numpy(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@nki.jit
def matmul(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    KT = K // 128
    for m in nl.affine_range(M // 128):
        a = nl.ndarray((128, KT, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            nisa.dma_copy(dst=a[:, k, :], src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
        for n in nl.affine_range(N // 512):
            b = nl.ndarray((128, KT, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                nisa.dma_copy(dst=b[:, k, :], src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                nisa.nc_matmul(dst=acc, stationary=a[:, k, :], moving=b[:, k, :])
            res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=res)
    return out


def matmul_numpy(lhsT, rhs):
    return lhsT.T @ rhs
)py";

Tensor normal(const Shape& s, uint64_t stream) {
  Rng rng(2024, stream);
  return random_normal(s, DType::kFloat32, rng);
}

void run_entry(benchmark::State& state, const std::string& entry, std::vector<Tensor> inputs,
               std::map<std::string, std::string> kwargs = {}) {
  if (auto r = python_host_init(); !r) {
    state.SkipWithError(r.error().format().c_str());
    return;
  }
  KernelCall c;
  c.src = kernel_files_from_source(kKernels, "bench_kernels.py");
  c.entry = entry;
  c.inputs = std::move(inputs);
  c.kwargs = std::move(kwargs);
  for (auto _ : state) {
    auto r = python_run(c);
    if (!r) {
      state.SkipWithError(r.error().format().c_str());
      break;
    }
    benchmark::DoNotOptimize(r->outputs.data());
  }
}

void BM_InstructionRate(benchmark::State& state) {
  const int64_t n = state.range(0);
  run_entry(state, "many_small", {normal({128, 1}, 1)}, {{"n", std::to_string(n)}});
  state.SetItemsProcessed(state.iterations() * (n + 2));
}
BENCHMARK(BM_InstructionRate)->Arg(20000)->Unit(benchmark::kMillisecond);

void BM_Softmax(benchmark::State& state) {
  run_entry(state, "softmax", {normal({4096, 4096}, 2)});
}
BENCHMARK(BM_Softmax)->Unit(benchmark::kMillisecond);

void BM_SoftmaxNumPy(benchmark::State& state) {
  run_entry(state, "softmax_numpy", {normal({4096, 4096}, 2)});
}
BENCHMARK(BM_SoftmaxNumPy)->Unit(benchmark::kMillisecond);

void BM_Matmul(benchmark::State& state) {
  run_entry(state, "matmul", {normal({2048, 2048}, 3), normal({2048, 2048}, 4)});
}
BENCHMARK(BM_Matmul)->Unit(benchmark::kMillisecond);

void BM_MatmulNumPy(benchmark::State& state) {
  run_entry(state, "matmul_numpy", {normal({2048, 2048}, 3), normal({2048, 2048}, 4)});
}
BENCHMARK(BM_MatmulNumPy)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
