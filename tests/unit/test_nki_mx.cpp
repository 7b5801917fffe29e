// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The MX formats (OCP microscaling, NeuronCore-v4): the float4_e2m1fn and float8_e8m0fnu codecs and the
// packed x4 lanes (tensor/dtype.h), and nisa.quantize_mx / nisa.nc_matmul_mx (nki/isa.h) run as kernels
// on trn3 — each against a reference written here from NKI's definition (32-value groups of 8
// partitions x 4 packed values, E8M0 scales in their quadrant's first rows) — plus the refusals
// with their codes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "nki/isa.h"
#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

TEST(DtypeMx, Fp4RoundsToNearestEvenAndSaturates) {
  const float values[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint8_t c = 0; c < 8; ++c) {
    EXPECT_EQ(fp4e2m1_to_f32(c), values[c]) << int(c);
    EXPECT_EQ(fp4e2m1_to_f32(static_cast<uint8_t>(c | 8)), -values[c]) << int(c);
    EXPECT_EQ(fp4e2m1_from_f32(values[c]), c);
  }
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(2.5f)), 2.0f);   // tie: the even mantissa
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(5.0f)), 4.0f);   // tie between 4 and 6
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(0.75f)), 1.0f);  // tie between 0.5 and 1
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(0.25f)), 0.0f);  // tie between 0 and 0.5
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(2.6f)), 3.0f);
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(7.0f)), 6.0f);  // saturates: no inf
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(-1e30f)), -6.0f);
  EXPECT_EQ(fp4e2m1_to_f32(fp4e2m1_from_f32(std::numeric_limits<float>::infinity())), 6.0f);
}

TEST(DtypeMx, E8M0IsAPowerOfTwoWithNaNAt255) {
  EXPECT_EQ(e8m0_to_f32(127), 1.0f);
  EXPECT_EQ(e8m0_to_f32(130), 8.0f);
  EXPECT_EQ(e8m0_to_f32(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(e8m0_to_f32(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(e8m0_to_f32(0xFF)));
  EXPECT_EQ(e8m0_from_f32(1.0f), 127);
  EXPECT_EQ(e8m0_from_f32(2.9f), 128);  // 1.45 * 2: rounds down
  EXPECT_EQ(e8m0_from_f32(3.0f), 129);  // 1.5 * 2: rounds up
  EXPECT_EQ(e8m0_from_f32(0.0f), 0);
  EXPECT_EQ(e8m0_from_f32(-1.0f), 0xFF);
  EXPECT_EQ(e8m0_from_f32(std::nanf("")), 0xFF);
  EXPECT_EQ(dtype_size(DType::kFloat8E8M0), 1);
  EXPECT_EQ(dtype_from_name("float8_e8m0fnu"), DType::kFloat8E8M0);
}

TEST(DtypeMx, PackedLanesHoldFourValues) {
  EXPECT_EQ(dtype_size(DType::kFloat8E4M3FNx4), 4);
  EXPECT_EQ(dtype_size(DType::kFloat8E5M2x4), 4);
  EXPECT_EQ(dtype_size(DType::kFloat4E2M1FNx4), 2);
  EXPECT_TRUE(dtype_is_packed(DType::kFloat4E2M1FNx4));
  EXPECT_FALSE(dtype_is_float(DType::kFloat8E4M3FNx4));
  EXPECT_EQ(dtype_from_name("float8_e5m2_x4"), DType::kFloat8E5M2x4);
  const float v[4] = {1.0f, -448.0f, 0.015625f, 500.0f};
  uint32_t e = 0;
  for (int j = 0; j < 4; ++j) packed_lane_store(&e, DType::kFloat8E4M3FNx4, j, v[j]);
  EXPECT_EQ(packed_lane_load(&e, DType::kFloat8E4M3FNx4, 0), 1.0f);
  EXPECT_EQ(packed_lane_load(&e, DType::kFloat8E4M3FNx4, 1), -448.0f);
  EXPECT_EQ(packed_lane_load(&e, DType::kFloat8E4M3FNx4, 2), 0.015625f);
  EXPECT_EQ(packed_lane_load(&e, DType::kFloat8E4M3FNx4, 3), 448.0f);  // saturating by default
  EXPECT_EQ(e & 0xFFu, fp8e4m3fn_from_f32(1.0f));                      // lane 0 in byte 0
  uint16_t h = 0;
  const float w[4] = {0.5f, -3.0f, 6.0f, 1.5f};
  for (int j = 0; j < 4; ++j) packed_lane_store(&h, DType::kFloat4E2M1FNx4, j, w[j]);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(packed_lane_load(&h, DType::kFloat4E2M1FNx4, j), w[j]) << j;
  EXPECT_EQ(h & 0xFu, fp4e2m1_from_f32(0.5f));  // lane 0 in the low nibble
  // Packed elements move as their bits.
  uint32_t big = 0xFEDCBA98u, copy = 0;
  store_i64(&copy, DType::kFloat8E4M3FNx4, load_i64(&big, DType::kFloat8E4M3FNx4));
  EXPECT_EQ(copy, big);
}

TEST(DtypeMx, ScaleRowsStayInTheirQuadrant) {
  EXPECT_EQ(mx_scale_row(0), 0);
  EXPECT_EQ(mx_scale_row(7), 0);
  EXPECT_EQ(mx_scale_row(8), 1);
  EXPECT_EQ(mx_scale_row(31), 3);
  EXPECT_EQ(mx_scale_row(32), 32);
  EXPECT_EQ(mx_scale_row(127), 99);
}

class NkiMx : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, std::vector<Tensor> inputs, std::string target = "trn3") {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "k";
    c.inputs = std::move(inputs);
    c.target = std::move(target);
    return python_run(c);
  }
  // Values over several magnitudes, so that groups get different scales; bfloat16.
  static Tensor values(const Shape& s, uint32_t seed) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) {
      const uint32_t h = (static_cast<uint32_t>(i) + seed) * 2654435761u;
      const float mag = std::ldexp(1.0f, static_cast<int>((h >> 8) % 12) - 6);
      v[i] = mag * (static_cast<float>(h % 1000) / 500.0f - 1.0f);
    }
    return Tensor::from_f32(s, v, DType::kBFloat16);
  }
};

// The reference quantization of NKI's quantize_mx docs: per group of 8 partitions x 4 values,
// X = 2^(floor(log2 amax) - (emax - 1)), q = fp8(v / X) (saturating). Returns [P, 4F] of the
// dequantized values q * X and the scale codes [P / 8, F].
struct MxRef {
  std::vector<float> deq;
  std::vector<int> codes;
};
MxRef quantize_ref(const Tensor& x, bool e5m2) {
  const int64_t p = x.shape()[0], f4 = x.shape()[1], f = f4 / 4;
  const std::vector<float> v = x.to_f32_vector();
  const int emax = e5m2 ? 15 : 8;
  MxRef r{std::vector<float>(v.size()), std::vector<int>(static_cast<size_t>(p / 8 * f))};
  for (int64_t g = 0; g < p / 8; ++g)
    for (int64_t c = 0; c < f; ++c) {
      float amax = 0;
      for (int64_t i = g * 8; i < g * 8 + 8; ++i)
        for (int j = 0; j < 4; ++j) amax = std::max(amax, std::fabs(v[static_cast<size_t>(i * f4 + c * 4 + j)]));
      const int e = amax > 0 ? static_cast<int>(std::floor(std::log2(amax))) - (emax - 1) : -127;
      r.codes[static_cast<size_t>(g * f + c)] = e + 127;
      const float scale = std::ldexp(1.0f, e);
      for (int64_t i = g * 8; i < g * 8 + 8; ++i)
        for (int j = 0; j < 4; ++j) {
          const size_t k = static_cast<size_t>(i * f4 + c * 4 + j);
          const float q = e5m2 ? fp8e5m2_to_f32(fp8e5m2_from_f32(v[k] / scale, Fp8Overflow::kSaturating))
                               : fp8e4m3fn_to_f32(fp8e4m3fn_from_f32(v[k] / scale, Fp8Overflow::kSaturating));
          r.deq[k] = q * scale;
        }
    }
  return r;
}

// [M, N] = sum over p, j of a[p, 4m + j] * b[p, 4n + j] for [P, 4M] and [P, 4N] value arrays.
// The product in double; with `magnitude`, also each element's sum of |a| |b| over the contraction,
// which bounds how far a float32 accumulation in any order may land from it.
std::vector<double> mx_matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int64_t p, int64_t m,
                                  int64_t n, std::vector<double>* magnitude = nullptr) {
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  if (magnitude) magnitude->assign(out.size(), 0.0);
  for (int64_t i = 0; i < p; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int j = 0; j < 4; ++j) {
        const double av = a[static_cast<size_t>(i * 4 * m + r * 4 + j)];
        for (int64_t c = 0; c < n; ++c) {
          const double term = av * b[static_cast<size_t>(i * 4 * n + c * 4 + j)];
          out[static_cast<size_t>(r * n + c)] += term;
          if (magnitude) (*magnitude)[static_cast<size_t>(r * n + c)] += std::fabs(term);
        }
      }
  return out;
}

constexpr const char* kQuantizeMatmul = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(xs, xm):
    P, M4 = xs.shape
    N4 = xm.shape[1]
    M, N = M4 // 4, N4 // 4
    s = nl.ndarray((P, M4), dtype=xs.dtype, buffer=nl.sbuf)
    m = nl.ndarray((P, N4), dtype=xm.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=xs)
    nisa.dma_copy(dst=m, src=xm)
    qs = nl.ndarray((P, M), dtype=nl.DTYPE, buffer=nl.sbuf)
    qm = nl.ndarray((P, N), dtype=nl.DTYPE, buffer=nl.sbuf)
    ss = nl.ndarray((P, M), dtype=nl.uint8, buffer=nl.sbuf)
    sm = nl.ndarray((P, N), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.memset(dst=ss, value=7)
    nisa.quantize_mx(dst=qs, src=s, dst_scale=ss)
    nisa.quantize_mx(dst=qm, src=m, dst_scale=sm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=qs, moving=qm, stationary_scale=ss, moving_scale=sm)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    qout = nl.ndarray((P, M), dtype=nl.DTYPE, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=qout, src=qs)
    sout = nl.ndarray((P, M), dtype=nl.uint8, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=sout, src=ss)
    return out, qout, sout
)py";

std::string with_dtype(std::string src, std::string_view dtype) {
  for (size_t at = src.find("DTYPE"); at != std::string::npos; at = src.find("DTYPE", at)) src.replace(at, 5, dtype);
  return src;
}

TEST_F(NkiMx, QuantizeThenMatmulMatchesTheDequantizingReference) {
  for (const bool e5m2 : {false, true}) {
    SCOPED_TRACE(e5m2 ? "float8_e5m2_x4" : "float8_e4m3fn_x4");
    const int64_t p = 128, m = 32, n = 64;
    const Tensor xs = values({p, 4 * m}, 1), xm = values({p, 4 * n}, 99);
    auto r = run(with_dtype(kQuantizeMatmul, e5m2 ? "float8_e5m2_x4" : "float8_e4m3fn_x4"), {xs, xm});
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(r->outputs.size(), 3u);
    const MxRef rs = quantize_ref(xs, e5m2), rm = quantize_ref(xm, e5m2);
    // The data: each x4 element's bytes are the 4 quantized values of src[p, 4f .. 4f + 3].
    const Tensor& q = r->outputs[1];
    const std::vector<int64_t> bits = q.to_i64_vector();
    const std::vector<int64_t> codes = r->outputs[2].to_i64_vector();
    int bad = 0;
    for (int64_t i = 0; i < p && bad < 5; ++i)
      for (int64_t c = 0; c < m && bad < 5; ++c) {
        const auto e = static_cast<uint32_t>(bits[static_cast<size_t>(i * m + c)]);
        const float scale = std::ldexp(1.0f, rs.codes[static_cast<size_t>((i / 8) * m + c)] - 127);
        for (int j = 0; j < 4; ++j) {
          const auto byte = static_cast<uint8_t>(e >> (8 * j));
          const float got = (e5m2 ? fp8e5m2_to_f32(byte) : fp8e4m3fn_to_f32(byte)) * scale;
          const float want = rs.deq[static_cast<size_t>(i * 4 * m + c * 4 + j)];
          if (got != want) {
            ++bad;
            ADD_FAILURE() << "data [" << i << ", " << c << "] lane " << j << ": " << got << " != " << want;
          }
        }
      }
    // The scales: rows 32q .. 32q + 3 hold the groups of quadrant q; the rest keep the memset's 7.
    for (int64_t row = 0; row < p; ++row)
      for (int64_t c = 0; c < m; ++c) {
        const int64_t within = row % 32;
        const int want = within < 4 ? rs.codes[static_cast<size_t>(((row / 32) * 4 + within) * m + c)] : 7;
        ASSERT_EQ(codes[static_cast<size_t>(row * m + c)], want) << "scale row " << row << " column " << c;
      }
    // The product: the dequantized values' matmul, and close to the unquantized one.
    std::vector<double> magnitude;
    const std::vector<double> want = mx_matmul_ref(rs.deq, rm.deq, p, m, n, &magnitude);
    const std::vector<double> exact = mx_matmul_ref(xs.to_f32_vector(), xm.to_f32_vector(), p, m, n);
    const std::vector<float> got = r->outputs[0].to_f32_vector();
    double err = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      // A float32 sum of 4P terms: BLAS's order (which differs between builds and thread counts)
      // may land some float32 ulps of the terms' magnitude away (about sqrt(4P) of them).
      ASSERT_NEAR(got[i], want[i], 4e-6 * magnitude[i] + 1e-6) << i;
      err += (got[i] - exact[i]) * (got[i] - exact[i]);
      norm += exact[i] * exact[i];
    }
    EXPECT_LT(std::sqrt(err / norm), e5m2 ? 0.1 : 0.05);  // the quantization error of MXFP8
    EXPECT_GT(std::sqrt(err / norm), 0.0);                // and not the unquantized product
  }
}

// Offline MX data as the SDK's MX tutorial passes it: packed bits in an integer tensor viewed as x4,
// and packed scales spread into the quadrants by DMA; a bfloat16 PSUM result.
constexpr const char* kOfflineFp4 = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(sd, ss, md, ms):
    P, M = sd.shape
    N = md.shape[1]
    a = nl.ndarray((P, M), dtype=nl.float4_e2m1fn_x4, buffer=nl.sbuf)
    b = nl.ndarray((P, N), dtype=nl.float4_e2m1fn_x4, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=sd.view(nl.float4_e2m1fn_x4))
    nisa.dma_copy(dst=b, src=md.view(nl.float4_e2m1fn_x4))
    sa = nl.ndarray((P, M), dtype=nl.uint8, buffer=nl.sbuf)
    sb = nl.ndarray((P, N), dtype=nl.uint8, buffer=nl.sbuf)
    for q in range(P // 32):
        nisa.dma_copy(dst=sa[32 * q:32 * q + 4, :], src=ss[4 * q:4 * q + 4, :])
        nisa.dma_copy(dst=sb[32 * q:32 * q + 4, :], src=ms[4 * q:4 * q + 4, :])
    acc = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=a, moving=b, stationary_scale=sa, moving_scale=sb)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out
)py";

TEST_F(NkiMx, Fp4MatmulOfPackedBitsWithOfflineScales) {
  const int64_t p = 64, m = 16, n = 24;
  auto packed = [](int64_t rows, int64_t cols, uint32_t seed, std::vector<float>& vals) {
    std::vector<int64_t> bits(static_cast<size_t>(rows * cols));
    vals.assign(static_cast<size_t>(rows * cols * 4), 0.0f);
    for (size_t e = 0; e < bits.size(); ++e) {
      uint32_t h = 0;
      for (int j = 0; j < 4; ++j) {
        const auto code = static_cast<uint8_t>(((e * 4 + j) * 7 + seed) % 16);
        h |= static_cast<uint32_t>(code) << (4 * j);
        vals[e * 4 + static_cast<size_t>(j)] = fp4e2m1_to_f32(code);
      }
      bits[e] = h;
    }
    return Tensor::from_i64({rows, cols}, bits, DType::kUInt16);
  };
  std::vector<float> av, bv;
  const Tensor sd = packed(p, m, 3, av), md = packed(p, n, 11, bv);
  auto scales = [](int64_t cols, int base, std::vector<int64_t>& codes) {
    codes.resize(static_cast<size_t>(8 * cols));  // [P / 8, cols]: the groups' scales, packed
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = base + static_cast<int64_t>(i % 5) - 2;
    return Tensor::from_i64({8, cols}, codes, DType::kUInt8);
  };
  std::vector<int64_t> sc, mc;
  const Tensor ss = scales(m, 127, sc), ms = scales(n, 125, mc);
  auto r = run(kOfflineFp4, {sd, ss, md, ms});
  ASSERT_TRUE(r) << r.error().format();
  // Dequantize with each partition's group scale, then multiply.
  for (int64_t i = 0; i < p; ++i)
    for (int64_t c = 0; c < m; ++c)
      for (int j = 0; j < 4; ++j)
        av[static_cast<size_t>((i * m + c) * 4 + j)] *=
            std::ldexp(1.0f, static_cast<int>(sc[static_cast<size_t>((i / 8) * m + c)]) - 127);
  for (int64_t i = 0; i < p; ++i)
    for (int64_t c = 0; c < n; ++c)
      for (int j = 0; j < 4; ++j)
        bv[static_cast<size_t>((i * n + c) * 4 + j)] *=
            std::ldexp(1.0f, static_cast<int>(mc[static_cast<size_t>((i / 8) * n + c)]) - 127);
  const std::vector<double> want = mx_matmul_ref(av, bv, p, m, n);
  const std::vector<float> got = r->outputs[0].to_f32_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], bf16_to_f32(bf16_from_f32(static_cast<float>(want[i])))) << i;  // one RNE into bfloat16
}

// quantize_mx reads tiles of several free dimensions flattened in row-major order (nki-library
// quantizes [128, 6, 8, 32] sources): a [128, 2, 64] source into a [128, 2, 16] tile gives the same
// bytes and scales as the [128, 128] source into [128, 32].
TEST_F(NkiMx, QuantizeFlattensFreeDimensions) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    flat = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=flat, src=x)
    cube = nl.ndarray((128, 2, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=cube, src=x.reshape((128, 2, 64)))
    q2 = nl.ndarray((128, 32), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s2 = nl.ndarray((128, 32), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q2, src=flat, dst_scale=s2)
    q3 = nl.ndarray((128, 2, 16), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s3 = nl.ndarray((128, 2, 16), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q3, src=cube, dst_scale=s3)
    outs = []
    for t in (q2.view(nl.uint32), q3.view(nl.uint32), s2, s3):
        o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t)
        outs.append(o)
    return tuple(outs)
)py";
  auto r = run(src, {values({128, 128}, 7)});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 4u);
  auto bytes = [](const Tensor& t) {
    const Tensor c = t.contiguous();
    const auto* b = static_cast<const uint8_t*>(c.data());
    return std::vector<uint8_t>(b, b + c.nbytes());
  };
  EXPECT_EQ(bytes(r->outputs[0]), bytes(r->outputs[1]));
  const auto s2 = bytes(r->outputs[2]), s3 = bytes(r->outputs[3]);
  ASSERT_EQ(s2.size(), s3.size());
  for (size_t row = 0; row < 128; ++row) {
    if (row % 32 >= 4) continue;  // quantize_mx writes 4 scale rows per 32-partition quadrant
    for (size_t c = 0; c < 32; ++c) EXPECT_EQ(s2[row * 32 + c], s3[row * 32 + c]) << row << "," << c;
  }
}

// nc_matmul_mx reads operands of several free dimensions flattened in row-major order, as the ISA
// reference sizes them (nki-library multiplies [128, 1, 96] slices of [128, H/512, I] weight tiles):
// a [P, 1, M] slice of a [P, 3, M] tile by a [P, 2, N / 2] tile into a [M, 2, N / 2] PSUM tile is the
// dequantized [P, 4M] by [P, 4N] product.
constexpr const char* kMatmul3d = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(xs, xm):
    P, M4 = xs.shape
    N4 = xm.shape[1]
    M, N = M4 // 4, N4 // 4
    s = nl.ndarray((P, M4), dtype=xs.dtype, buffer=nl.sbuf)
    m = nl.ndarray((P, 2, N4 // 2), dtype=xm.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=xs)
    nisa.dma_copy(dst=m, src=xm.reshape((P, 2, N4 // 2)))
    qs = nl.ndarray((P, 3, M), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    ss = nl.ndarray((P, 3, M), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.memset(dst=ss, value=0)
    nisa.quantize_mx(dst=qs[:, 1:2, :], src=s, dst_scale=ss[:, 1:2, :])
    qm = nl.ndarray((P, 2, N // 2), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    sm = nl.ndarray((P, 2, N // 2), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.memset(dst=sm, value=0)
    nisa.quantize_mx(dst=qm, src=m, dst_scale=sm)
    acc = nl.ndarray((M, 2, N // 2), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=acc, stationary=qs[:, 1:2, :], moving=qm, stationary_scale=ss[:, 1:2, :],
                      moving_scale=sm)
    res = nl.ndarray((M, 2, N // 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    out = nl.ndarray((M, 2, N // 2), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out
)py";

TEST_F(NkiMx, MatmulFlattensFreeDimensions) {
  const int64_t p = 128, m = 96, n = 64;
  const Tensor xs = values({p, 4 * m}, 5), xm = values({p, 4 * n}, 41);
  auto r = run(kMatmul3d, {xs, xm});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].shape(), (Shape{m, 2, n / 2}));
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
  const MxRef rs = quantize_ref(xs, false), rm = quantize_ref(xm, false);
  std::vector<double> magnitude;
  const std::vector<double> want = mx_matmul_ref(rs.deq, rm.deq, p, m, n, &magnitude);
  const std::vector<float> got = r->outputs[0].to_f32_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 4e-6 * magnitude[i] + 1e-6) << i;
}

TEST_F(NkiMx, RefusalsCarryTheirCodes) {
  const std::string head = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x)
)py";
  struct Case {
    const char* body;
    const char* code;
    const char* target;
  };
  const Case cases[] = {
      // quantize_mx on trn2: NeuronCore-v4 only.
      {"    q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    sc = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.quantize_mx(dst=q, src=s, dst_scale=sc)\n",
       "nkia_feature_not_on_target", "trn2"},
      // An unpacked fp8 destination.
      {"    q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn, buffer=nl.sbuf)\n"
       "    sc = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.quantize_mx(dst=q, src=s, dst_scale=sc)\n",
       "nkia_mx_dtype", "trn3"},
      // float4 output: quantize_mx writes fp8 only.
      {"    q = nl.ndarray((128, 128), dtype=nl.float4_e2m1fn_x4, buffer=nl.sbuf)\n"
       "    sc = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.quantize_mx(dst=q, src=s, dst_scale=sc)\n",
       "nkia_mx_dtype", "trn3"},
      // A scale tile that does not reach the last quadrant's rows.
      {"    q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    sc = nl.ndarray((16, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.quantize_mx(dst=q, src=s, dst_scale=sc)\n",
       "nkia_mx_layout", "trn3"},
      // 48 partitions: not a multiple of 32.
      {"    q = nl.ndarray((48, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    sc = nl.ndarray((48, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.quantize_mx(dst=q, src=s[0:48, :], dst_scale=sc)\n",
       "nkia_mx_layout", "trn3"},
      // The source is not 4x the destination's free size.
      {"    q = nl.ndarray((128, 64), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    sc = nl.ndarray((128, 64), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.quantize_mx(dst=q, src=s, dst_scale=sc)\n",
       "nkia_mx_layout", "trn3"},
      // nc_matmul_mx of unpacked tiles.
      {"    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)\n"
       "    sc = nl.ndarray((128, 512), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.nc_matmul_mx(dst=acc, stationary=s[:, 0:128], moving=s, stationary_scale=sc[:, 0:128], "
       "moving_scale=sc)\n",
       "nkia_mx_dtype", "trn3"},
      // A stationary free size over 128.
      {"    a = nl.ndarray((128, 256), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)\n"
       "    sc = nl.ndarray((128, 256), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.nc_matmul_mx(dst=acc, stationary=a, moving=a[:, 0:128], stationary_scale=sc, "
       "moving_scale=sc[:, 0:128])\n",
       "nkia_mx_layout", "trn3"},
      // A [128, 2, 96] stationary: 192 free elements, over 128 once flattened.
      {"    a = nl.ndarray((128, 2, 96), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)\n"
       "    sc = nl.ndarray((128, 2, 96), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.nc_matmul_mx(dst=acc, stationary=a, moving=a[:, 0, 0:64], stationary_scale=sc, "
       "moving_scale=sc[:, 0, 0:64])\n",
       "nkia_mx_layout", "trn3"},
      // A destination whose free size is not the moving operand's (2 x 16 against 64).
      {"    a = nl.ndarray((128, 2, 32), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    acc = nl.ndarray((64, 2, 16), dtype=nl.float32, buffer=nl.psum)\n"
       "    sc = nl.ndarray((128, 2, 32), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.nc_matmul_mx(dst=acc, stationary=a, moving=a, stationary_scale=sc, moving_scale=sc)\n",
       "err_store_dst_shape_smaller_than_other_shape", "trn3"},
      // An int32 PSUM result.
      {"    a = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    acc = nl.ndarray((128, 128), dtype=nl.int32, buffer=nl.psum)\n"
       "    sc = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.nc_matmul_mx(dst=acc, stationary=a, moving=a, stationary_scale=sc, moving_scale=sc)\n",
       "nkia_mx_dtype", "trn3"},
      // nc_matmul_mx on trn2.
      {"    a = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)\n"
       "    sc = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)\n"
       "    nisa.nc_matmul_mx(dst=acc, stationary=a, moving=a, stationary_scale=sc, moving_scale=sc)\n",
       "nkia_feature_not_on_target", "trn2"},
      // A Vector-engine copy of packed data.
      {"    a = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    b = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)\n"
       "    nisa.tensor_copy(dst=b, src=a)\n",
       "nkia_packed_dtype_operand", "trn3"},
  };
  const Tensor x = Tensor::full({128, 512}, DType::kBFloat16, 1.0);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    auto r = run(head + c.body + "    return x\n", {x}, c.target);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, c.code) << r.error().format();
  }
}

}  // namespace
}  // namespace nki_agent
