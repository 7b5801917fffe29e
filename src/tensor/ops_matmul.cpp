// np.matmul (see ops.h). Float operands are widened to float32 and multiplied with OpenBLAS's
// cblas_sgemm — directly on the operands' storage when they are float32 matrices with a unit
// stride on either axis; integer operands use an exact int64 loop. gemm_into (nc_matmul's PSUM
// path) computes products of at most 64 columns itself (small_gemm).
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/target_clones.h"

#include "tensor/ops.h"

namespace nki_agent {

namespace {

// A 2-D float32 view BLAS can read in place: row-major with a unit column stride (no transpose)
// or a unit row stride (transpose). The leading dimension must be at least the row length.
struct BlasOperand {
  const void* data = nullptr;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int ld = 0;
};

bool blas_view(const Tensor& m, BlasOperand* out) {
  const int64_t r = m.shape()[0], c = m.shape()[1];
  const int64_t s0 = m.strides()[0], s1 = m.strides()[1];
  if ((s1 == 1 || c == 1) && s0 >= std::max<int64_t>(c, 1)) {
    *out = {m.data(), CblasNoTrans, static_cast<int>(std::max<int64_t>(s0, 1))};
    return true;
  }
  if ((s0 == 1 || r == 1) && s1 >= std::max<int64_t>(r, 1)) {
    *out = {m.data(), CblasTrans, static_cast<int>(std::max<int64_t>(s1, 1))};
    return true;
  }
  return false;
}

// m (a 2-D float32 view) as BLAS reads it: in place, or packed row-major into `packed` when m's
// layout does not allow. The packing buffers are the thread's own and kept from call to call: a
// convolution packs a strided row for each of its thousands of small matmuls.
BlasOperand blas_operand(const Tensor& m, std::vector<float>& packed) {
  BlasOperand o;
  if (blas_view(m, &o)) return o;
  const int64_t r = m.shape()[0], c = m.shape()[1], s0 = m.strides()[0], s1 = m.strides()[1];
  packed.resize(static_cast<size_t>(r * c));
  const auto* src = static_cast<const float*>(m.data());
  float* dst = packed.data();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) dst[i * c + j] = src[i * s0 + j * s1];
  return {dst, CblasNoTrans, static_cast<int>(std::max<int64_t>(c, 1))};
}

std::vector<float>& packed_a() {
  thread_local std::vector<float> v;
  return v;
}
std::vector<float>& packed_b() {
  thread_local std::vector<float> v;
  return v;
}

// out[M,N] = a[M,K] @ b[K,N] in float32; out is contiguous.
void sgemm_2d(const Tensor& a, const Tensor& b, Tensor& out) {
  const int M = static_cast<int>(a.shape()[0]), K = static_cast<int>(a.shape()[1]);
  const int N = static_cast<int>(b.shape()[1]);
  if (M == 0 || N == 0) return;
  if (K == 0) {
    out.fill(0);
    return;
  }
  const BlasOperand oa = blas_operand(a, packed_a()), ob = blas_operand(b, packed_b());
  cblas_sgemm(CblasRowMajor, oa.trans, ob.trans, M, N, K, 1.0f, static_cast<const float*>(oa.data), oa.ld,
              static_cast<const float*>(ob.data), ob.ld, 0.0f, static_cast<float*>(out.data()), N);
}

// out[M,N] = a[M,K] @ b[K,N] for integer operands: int64 products and sums with wrap-around, which
// is exact modulo 2^64 and so exact once wrapped into out's (at most 32-bit) integer type.
void igemm_2d(const Tensor& a, const Tensor& b, Tensor& out) {
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  const std::vector<int64_t> va = a.to_i64_vector(), vb = b.to_i64_vector();
  std::vector<uint64_t> row(static_cast<size_t>(N));
  auto* o = static_cast<uint8_t*>(out.data());
  for (int64_t i = 0; i < M; ++i) {
    std::fill(row.begin(), row.end(), 0);
    for (int64_t k = 0; k < K; ++k) {
      const uint64_t x = static_cast<uint64_t>(va[static_cast<size_t>(i * K + k)]);
      const int64_t* brow = vb.data() + k * N;
      for (int64_t j = 0; j < N; ++j) row[static_cast<size_t>(j)] += x * static_cast<uint64_t>(brow[j]);
    }
    for (int64_t j = 0; j < N; ++j)
      store_i64(o + (i * N + j) * out.itemsize(), out.dtype(), static_cast<int64_t>(row[static_cast<size_t>(j)]));
  }
}

// out[M, N] = a @ b (+ out when accumulating) for a product of few columns whose left operand has
// its rows on the unit stride (a transposed view: nc_matmul's stationary tile). OpenBLAS packs both
// operands for every call, and for the [128, 128] @ [128, 14] products of a convolution the packing
// took as long as the multiply. Each element is summed over k in order with fused multiply-adds,
// from zero, then added to out: one order on every machine (std::fma rounds once on any instruction
// set), where OpenBLAS's rounding depends on its kernel for the processor (the two differ in the
// last place on about a tenth of the elements).
// nc_matmul contracts over at most 128 partitions; longer contractions, never measured here, are
// left to OpenBLAS.
constexpr int64_t kSmallGemmMaxN = 64;
constexpr int64_t kSmallGemmMaxK = 256;

NKIA_TARGET_CLONES void small_gemm(const float* a, int64_t a_k, const float* b, int64_t b_k, int64_t b_n, float* out,
                                   int64_t out_m, int64_t M, int64_t K, int64_t N, bool accumulate) {
  // Blocks of kRows x kCols elements of out, their sums kept in registers over the whole of k.
  constexpr int64_t kRows = 32, kCols = 4;
  for (int64_t n0 = 0; n0 < N; n0 += kCols) {
    const int64_t cols = std::min(kCols, N - n0);
    for (int64_t m0 = 0; m0 < M; m0 += kRows) {
      const int64_t rows = std::min(kRows, M - m0);
      float acc[kCols][kRows] = {};
      if (rows == kRows) {
        for (int64_t k = 0; k < K; ++k) {
          const float* ak = a + k * a_k + m0;
          float bv[kCols];
#pragma GCC unroll 4
          for (int64_t c = 0; c < kCols; ++c) bv[c] = c < cols ? b[k * b_k + (n0 + c) * b_n] : 0.0f;
#pragma GCC unroll 4
          for (int64_t c = 0; c < kCols; ++c)
#pragma GCC unroll 32
            for (int64_t m = 0; m < kRows; ++m) acc[c][m] = std::fma(ak[m], bv[c], acc[c][m]);
        }
      } else {
        for (int64_t k = 0; k < K; ++k) {
          const float* ak = a + k * a_k + m0;
          for (int64_t c = 0; c < cols; ++c) {
            const float bv = b[k * b_k + (n0 + c) * b_n];
            for (int64_t m = 0; m < rows; ++m) acc[c][m] = std::fma(ak[m], bv, acc[c][m]);
          }
        }
      }
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t m = 0; m < rows; ++m) {
          float& o = out[(m0 + m) * out_m + n0 + c];
          o = accumulate ? acc[c][m] + o : acc[c][m];
        }
    }
  }
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in, std::optional<DType> out_dtype) {
  if (a_in.ndim() == 0 || b_in.ndim() == 0) throw std::invalid_argument("matmul: operands must be at least 1-D");
  const DType rt = promote_types(a_in.dtype(), b_in.dtype());
  const bool integer = !dtype_is_float(rt);
  const DType ot = out_dtype.value_or(rt == DType::kBool ? DType::kInt32 : rt);

  // Widen float operands to float32 before broadcasting, so each is converted once.
  auto widen = [&](const Tensor& t) { return integer || t.dtype() == DType::kFloat32 ? t : t.astype(DType::kFloat32); };
  Tensor a = widen(a_in.ndim() == 1 ? a_in.expand_dims(0) : a_in);
  Tensor b = widen(b_in.ndim() == 1 ? b_in.expand_dims(1) : b_in);
  const int64_t M = a.dim(-2), K = a.dim(-1), K2 = b.dim(-2), N = b.dim(-1);
  if (K != K2)
    throw std::invalid_argument(fmt::format("matmul: shapes {} and {} do not align ({} != {})", shape_str(a_in.shape()),
                                            shape_str(b_in.shape()), K, K2));
  constexpr int64_t kBlasMax = 2147483647;  // BLAS takes int dimensions
  if (M > kBlasMax || N > kBlasMax || K > kBlasMax) throw std::invalid_argument("matmul: dimension too large");

  Shape batch =
      broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2), Shape(b.shape().begin(), b.shape().end() - 2));
  Shape full_a = batch, full_b = batch, out_shape = batch;
  full_a.insert(full_a.end(), {M, K});
  full_b.insert(full_b.end(), {K, N});
  out_shape.insert(out_shape.end(), {M, N});
  const int64_t nbatch = shape_numel(batch);
  Tensor a3 = a.broadcast_to(full_a).reshape({nbatch, M, K});
  Tensor b3 = b.broadcast_to(full_b).reshape({nbatch, K, N});

  Tensor res = Tensor::uninitialized(out_shape, integer ? ot : DType::kFloat32);  // gemm writes every element
  Tensor r3 = res.reshape({nbatch, M, N});
  for (int64_t i = 0; i < nbatch; ++i) {
    Tensor o = r3.select(0, i);
    if (integer)
      igemm_2d(a3.select(0, i), b3.select(0, i), o);
    else
      sgemm_2d(a3.select(0, i), b3.select(0, i), o);
  }
  if (res.dtype() != ot) res = res.astype(ot);
  if (a_in.ndim() == 1) res = res.squeeze(-2);
  if (b_in.ndim() == 1) res = res.squeeze(-1);
  return res;
}

bool gemm_into(const Tensor& a, const Tensor& b, Tensor& out, bool accumulate) {
  if (a.ndim() != 2 || b.ndim() != 2 || out.ndim() != 2 || a.dtype() != DType::kFloat32 ||
      b.dtype() != DType::kFloat32 || out.dtype() != DType::kFloat32)
    return false;
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  if (b.shape()[0] != K || out.shape()[0] != M || out.shape()[1] != N) return false;
  // out must be row-major with unit column stride (BLAS writes C in place).
  if (!(out.strides()[1] == 1 || N == 1) || out.strides()[0] < std::max<int64_t>(N, 1)) return false;
  if (M == 0 || N == 0) return true;
  if (K > 0 && N <= kSmallGemmMaxN && K <= kSmallGemmMaxK && (a.strides()[0] == 1 || M == 1)) {
    small_gemm(static_cast<const float*>(a.data()), a.strides()[1], static_cast<const float*>(b.data()), b.strides()[0],
               b.strides()[1], static_cast<float*>(out.data()), out.strides()[0], M, K, N, accumulate);
    return true;
  }
  // An operand BLAS cannot read in place (a strided view: every other column of a tile) is packed
  // first, as matmul() does: a few KB against a product written in place.
  const BlasOperand oa = blas_operand(a, packed_a()), ob = blas_operand(b, packed_b());
  if (K == 0) {
    if (!accumulate) out.fill(0);
    return true;
  }
  cblas_sgemm(CblasRowMajor, oa.trans, ob.trans, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 1.0f,
              static_cast<const float*>(oa.data), oa.ld, static_cast<const float*>(ob.data), ob.ld,
              accumulate ? 1.0f : 0.0f, static_cast<float*>(out.data()), static_cast<int>(out.strides()[0]));
  return true;
}

}  // namespace nki_agent
