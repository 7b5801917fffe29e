// Google Benchmark figures for the tensor library on NKI tile-sized arrays (docs/perf.md).
//
// Elementwise throughput is reported as bytes touched per second (inputs read + output written),
// next to a memcpy moving the same number of bytes in the same run; matmul is reported next to a
// plain cblas_sgemm on the same buffers. Run: ./build/bench/bench_tensor
#include <benchmark/benchmark.h>

#include <cblas.h>
#include <cmath>

#include <cstring>
#include <vector>

#include "tensor/ops.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

// Tile shapes: 128 partitions by 512 or 2048 elements.
void TileArgs(benchmark::internal::Benchmark* b) {
  b->Args({128, 512})->Args({128, 2048});
}

Tensor rand_tile(int64_t p, int64_t f, DType t, uint64_t stream) {
  Rng rng(1234, stream);
  return random_normal({p, f}, t, rng);
}

// memcpy of a buffer sized so that bytes touched (read + written) equal an fp32 binary op's
// (2 inputs read + 1 output written = 3 arrays).
void BM_MemcpySameBytes(benchmark::State& state) {
  const int64_t n = state.range(0) * state.range(1);
  const size_t bytes = static_cast<size_t>(n) * 4 * 3 / 2;  // copy moves 2x its size
  std::vector<uint8_t> src(bytes, 1), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes) * 2);
}
BENCHMARK(BM_MemcpySameBytes)->Apply(TileArgs);

void BM_AddF32Into(benchmark::State& state) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kFloat32, 1), b = rand_tile(p, f, DType::kFloat32, 2);
  Tensor out = Tensor::empty({p, f}, DType::kFloat32);
  for (auto _ : state) {
    binary_into(BinaryOp::kAdd, a, b, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 4 * 3);
}
BENCHMARK(BM_AddF32Into)->Apply(TileArgs);

void BM_AddF32Alloc(benchmark::State& state) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kFloat32, 1), b = rand_tile(p, f, DType::kFloat32, 2);
  for (auto _ : state) {
    Tensor out = binary(BinaryOp::kAdd, a, b);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 4 * 3);
}
BENCHMARK(BM_AddF32Alloc)->Apply(TileArgs);

void BM_MulF32BroadcastColumn(benchmark::State& state) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kFloat32, 1), s = rand_tile(p, 1, DType::kFloat32, 2);
  Tensor out = Tensor::empty({p, f}, DType::kFloat32);
  for (auto _ : state) {
    binary_into(BinaryOp::kMultiply, a, s, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 4 * 2);
}
BENCHMARK(BM_MulF32BroadcastColumn)->Apply(TileArgs);

void BM_AddBF16Into(benchmark::State& state) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kBFloat16, 1), b = rand_tile(p, f, DType::kBFloat16, 2);
  Tensor out = Tensor::empty({p, f}, DType::kBFloat16);
  for (auto _ : state) {
    binary_into(BinaryOp::kAdd, a, b, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 2 * 3);
}
BENCHMARK(BM_AddBF16Into)->Apply(TileArgs);

// unary_into(op) over a [p, f] float32 tile.
void unary_f32_into(benchmark::State& state, UnaryOp op) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kFloat32, 1);
  Tensor out = Tensor::empty({p, f}, DType::kFloat32);
  for (auto _ : state) {
    unary_into(op, a, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 4 * 2);
}

void BM_ExpF32Into(benchmark::State& state) {
  unary_f32_into(state, UnaryOp::kExp);
}
BENCHMARK(BM_ExpF32Into)->Apply(TileArgs);

// nl.sin's arithmetic (tensor/vector_math.h) beside libm's sinf element by element.
void BM_SinF32Into(benchmark::State& state) {
  unary_f32_into(state, UnaryOp::kSin);
}
BENCHMARK(BM_SinF32Into)->Apply(TileArgs);

void BM_SinF32Libm(benchmark::State& state) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kFloat32, 1);
  Tensor out = Tensor::empty({p, f}, DType::kFloat32);
  const float* x = a.data_as<float>();
  float* y = out.data_as<float>();
  for (auto _ : state) {
    for (int64_t i = 0; i < p * f; ++i) y[i] = std::sin(x[i]);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 4 * 2);
}
BENCHMARK(BM_SinF32Libm)->Apply(TileArgs);

// A reduction of a [p, f] tile along `axis` (1: along each row, into one slot; 0: across rows).
void reduce_tile(benchmark::State& state, ReduceOp op, int axis) {
  const int64_t p = state.range(0), f = state.range(1);
  Tensor a = rand_tile(p, f, DType::kFloat32, 1);
  const int axes[] = {axis};
  for (auto _ : state) {
    Tensor r = reduce(op, a, axes);
    benchmark::DoNotOptimize(r.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p * f * 4);
}
void BM_SumLastAxisF32(benchmark::State& state) {
  reduce_tile(state, ReduceOp::kSum, 1);
}
BENCHMARK(BM_SumLastAxisF32)->Apply(TileArgs);
void BM_MaxLastAxisF32(benchmark::State& state) {
  reduce_tile(state, ReduceOp::kMax, 1);
}
BENCHMARK(BM_MaxLastAxisF32)->Apply(TileArgs);
void BM_MaxPartitionAxisF32(benchmark::State& state) {
  reduce_tile(state, ReduceOp::kMax, 0);
}
BENCHMARK(BM_MaxPartitionAxisF32)->Apply(TileArgs);

// [128, K] @ [K, N] for the two tile shapes: K = N/4 keeps the moving tile [K, N] NKI-like.
void MatmulArgs(benchmark::internal::Benchmark* b) {
  b->Args({128, 128, 512})->Args({128, 512, 2048});
}

void BM_MatmulTensor(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  Tensor a = rand_tile(m, k, DType::kFloat32, 1), b = rand_tile(k, n, DType::kFloat32, 2);
  for (auto _ : state) {
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * m * k * n * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulTensor)->Apply(MatmulArgs)->UseRealTime();

void BM_MatmulTensorTransposedA(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  Tensor at = rand_tile(k, m, DType::kFloat32, 1), b = rand_tile(k, n, DType::kFloat32, 2);
  Tensor a = at.transpose();  // the NKI stationary layout [K, M], used as A = S^T
  for (auto _ : state) {
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * m * k * n * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulTensorTransposedA)->Apply(MatmulArgs)->UseRealTime();

void BM_MatmulPlainSgemm(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)),
            n = static_cast<int>(state.range(2));
  Tensor a = rand_tile(m, k, DType::kFloat32, 1), b = rand_tile(k, n, DType::kFloat32, 2);
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data_as<float>(), k, b.data_as<float>(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * m * k * n * 1e-9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulPlainSgemm)->Apply(MatmulArgs)->UseRealTime();

}  // namespace
}  // namespace nki_agent

BENCHMARK_MAIN();
