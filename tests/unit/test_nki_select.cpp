// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The search, select and cross-partition instructions (nki/isa_select.h) through both dialects:
// max8, nc_find_index8, nc_match_replace8, nc_stream_shuffle, range_select, select_reduce,
// tensor_copy_predicated, tensor_partition_reduce, sequence_bounds, and activation with a [P, 1] scale tile —
// each against a reference written here from the instruction's definition, plus the checks that
// reject bad operands with their codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

class NkiSelect : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, std::vector<Tensor> inputs, std::string target = {}) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "k";
    c.inputs = std::move(inputs);
    c.target = std::move(target);
    return python_run(c);
  }
  // Distinct-ish values with repeats: (i * 37) % 101 - 50, scaled.
  static Tensor values(const Shape& s, float scale = 0.25f) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 37) % 101) - 50) * scale;
    return Tensor::from_f32(s, v);
  }
};

constexpr const char* kSearchCurrent = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    outs = [nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.shared_hbm),
            nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.shared_hbm),
            nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm),
            nl.ndarray((P, 8), dtype=nl.int32, buffer=nl.shared_hbm)]
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    top = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.max8(dst=top, src=t)
    idx = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.sbuf)
    nisa.nc_find_index8(dst=idx, data=t, vals=top)
    rep = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    ridx = nl.ndarray((P, 8), dtype=nl.int32, buffer=nl.sbuf)
    nisa.nc_match_replace8(dst=rep, data=t, vals=top, imm=-1000.0, dst_idx=ridx)
    for o, s in zip(outs, (top, idx, rep, ridx)):
        nisa.dma_copy(dst=o, src=s)
    return tuple(outs)
)py";

constexpr const char* kSearchLegacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    outs = [nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.shared_hbm),
            nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.shared_hbm),
            nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm),
            nl.ndarray((P, 8), dtype=nl.int32, buffer=nl.shared_hbm)]
    t = nl.load(x)
    top = nisa.max8(src=t)
    idx = nisa.nc_find_index8(data=t, vals=top)
    ridx = nl.ndarray((P, 8), dtype=nl.int32, buffer=nl.sbuf)
    rep = nisa.nc_match_replace8(data=t, vals=top, imm=-1000.0, dst_idx=ridx)
    for o, s in zip(outs, (top, idx, rep, ridx)):
        nl.store(o, value=s)
    return tuple(outs)
)py";

TEST_F(NkiSelect, Max8FindIndex8MatchReplace8) {
  const int64_t P = 16, F = 40;
  Tensor x = values({P, F});
  std::vector<float> xv = x.to_f32_vector();
  for (const char* src : {kSearchCurrent, kSearchLegacy}) {
    auto r = run(src, {x});
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(r->outputs.size(), 4u);
    std::vector<float> top = r->outputs[0].to_f32_vector(), rep = r->outputs[2].to_f32_vector();
    std::vector<int64_t> idx = r->outputs[1].to_i64_vector(), ridx = r->outputs[3].to_i64_vector();
    for (int64_t p = 0; p < P; ++p) {
      std::vector<float> row(xv.begin() + p * F, xv.begin() + (p + 1) * F);
      std::vector<float> sorted = row;
      std::sort(sorted.begin(), sorted.end(), std::greater<float>());
      std::vector<bool> found(static_cast<size_t>(F), false), taken(static_cast<size_t>(F), false);
      for (int64_t j = 0; j < 8; ++j) {
        EXPECT_EQ(top[static_cast<size_t>(p * 8 + j)], sorted[static_cast<size_t>(j)]) << p << "," << j;
        // find_index8: vals in order, each the first occurrence not found yet (repeats ascend).
        int64_t k = 0;
        while (found[static_cast<size_t>(k)] || row[static_cast<size_t>(k)] != sorted[static_cast<size_t>(j)]) ++k;
        found[static_cast<size_t>(k)] = true;
        EXPECT_EQ(idx[static_cast<size_t>(p * 8 + j)], k) << p << "," << j;
      }
      for (int64_t j = 7; j >= 0; --j) {
        // match_replace8: vals from the last to the first, each the first occurrence not taken yet.
        int64_t k = 0;
        while (taken[static_cast<size_t>(k)] || row[static_cast<size_t>(k)] != sorted[static_cast<size_t>(j)]) ++k;
        taken[static_cast<size_t>(k)] = true;
        EXPECT_EQ(ridx[static_cast<size_t>(p * 8 + j)], k) << p << "," << j;
      }
      for (int64_t f = 0; f < F; ++f)
        EXPECT_EQ(rep[static_cast<size_t>(p * F + f)],
                  taken[static_cast<size_t>(f)] ? -1000.0f : row[static_cast<size_t>(f)]);
    }
  }
}

TEST_F(NkiSelect, StreamShuffleAndPartitionReduce) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    shuf = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    bcast = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    red = nl.ndarray((2, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    s = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=s, value=7.0)
    # reverse each quadrant, but keep partition 5 of every quadrant (255)
    mask = [31 - i for i in range(32)]
    mask[5] = 255
    nisa.nc_stream_shuffle(dst=s, src=t, shuffle_mask=mask)
    nisa.dma_copy(dst=shuf, src=s)
    b = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    for q in nl.static_range(P // 32):
        nisa.nc_stream_shuffle(dst=b[q * 32:(q + 1) * 32, :], src=t[0:32, :], shuffle_mask=[3] * 32)
    nisa.dma_copy(dst=bcast, src=b)
    r = nl.ndarray((1, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_partition_reduce(dst=r, op=nl.add, data=t)
    m = nl.ndarray((1, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_partition_reduce(dst=m, op=nl.maximum, data=t)
    nisa.dma_copy(dst=red[0:1, :], src=r)
    nisa.dma_copy(dst=red[1:2, :], src=m)
    return shuf, bcast, red
)py";
  const int64_t P = 64, F = 12;
  Tensor x = values({P, F});
  std::vector<float> xv = x.to_f32_vector();
  auto r = run(src, {x});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> shuf = r->outputs[0].to_f32_vector(), bcast = r->outputs[1].to_f32_vector(),
                     red = r->outputs[2].to_f32_vector();
  for (int64_t p = 0; p < P; ++p)
    for (int64_t f = 0; f < F; ++f) {
      const int64_t i = p % 32, from = (p / 32) * 32 + 31 - i;
      EXPECT_EQ(shuf[static_cast<size_t>(p * F + f)], i == 5 ? 7.0f : xv[static_cast<size_t>(from * F + f)]);
      EXPECT_EQ(bcast[static_cast<size_t>(p * F + f)], xv[static_cast<size_t>(3 * F + f)]);
    }
  for (int64_t f = 0; f < F; ++f) {
    float sum = 0, mx = -INFINITY;
    for (int64_t p = 0; p < P; ++p) {
      sum += xv[static_cast<size_t>(p * F + f)];
      mx = std::max(mx, xv[static_cast<size_t>(p * F + f)]);
    }
    EXPECT_FLOAT_EQ(red[static_cast<size_t>(f)], sum);
    EXPECT_EQ(red[static_cast<size_t>(F + f)], mx);
  }
}

TEST_F(NkiSelect, RangeSelectSelectReduceCopyPredicated) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    outs = [nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(3)]
    maxes = nl.ndarray((P, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    # bounds per partition p: keep free index i with p <= i < p + 4
    lo = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(dst=lo, pattern=[[0, 1]], offset=0, channel_multiplier=1)
    hi = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=hi, data=lo, op0=nl.add, operand0=4.0)
    rs = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    rmax = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.range_select(dst=rs, on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less, bound0=lo, bound1=hi,
                      reduce_res=rmax, reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=nl.maximum,
                      range_start=0, on_false_value=nl.fp32.min)
    # predicate: x > 0
    pred = nl.ndarray((P, F), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=pred, data=t, op0=nl.greater, operand0=0.0)
    sr = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    smax = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.select_reduce(dst=sr, predicate=pred, on_true=t, on_false=-5.0, reduce_res=smax,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_op=nl.maximum)
    cp = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=cp, value=3.0)
    nisa.tensor_copy_predicated(dst=cp, src=t, predicate=pred, reverse_pred=True)
    for o, s in zip(outs, (rs, sr, cp)):
        nisa.dma_copy(dst=o, src=s)
    nisa.dma_copy(dst=maxes[:, 0:1], src=rmax)
    nisa.dma_copy(dst=maxes[:, 1:2], src=smax)
    return outs[0], outs[1], outs[2], maxes
)py";
  const int64_t P = 32, F = 48;
  Tensor x = values({P, F});
  std::vector<float> xv = x.to_f32_vector();
  auto r = run(src, {x}, "trn2");  // range_select exists on NeuronCore-v3 and later
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> rs = r->outputs[0].to_f32_vector(), sr = r->outputs[1].to_f32_vector(),
                     cp = r->outputs[2].to_f32_vector(), mx = r->outputs[3].to_f32_vector();
  const float lowest = -std::numeric_limits<float>::max();
  for (int64_t p = 0; p < P; ++p) {
    float rmax = -INFINITY, smax = -INFINITY;
    for (int64_t f = 0; f < F; ++f) {
      const float v = xv[static_cast<size_t>(p * F + f)];
      const float want_rs = (f >= p && f < p + 4) ? v : lowest;
      const float want_sr = v > 0 ? v : -5.0f;
      EXPECT_EQ(rs[static_cast<size_t>(p * F + f)], want_rs) << p << "," << f;
      EXPECT_EQ(sr[static_cast<size_t>(p * F + f)], want_sr) << p << "," << f;
      EXPECT_EQ(cp[static_cast<size_t>(p * F + f)], v > 0 ? 3.0f : v) << p << "," << f;
      rmax = std::max(rmax, want_rs);
      smax = std::max(smax, want_sr);
    }
    EXPECT_EQ(mx[static_cast<size_t>(p * 2)], rmax);
    EXPECT_EQ(mx[static_cast<size_t>(p * 2 + 1)], smax);
  }
}

TEST_F(NkiSelect, ActivationScaleTile) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    sc = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(dst=sc, pattern=[[0, 1]], offset=1, channel_multiplier=1)   # partition p scales by p + 1
    b = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=b, value=0.5)
    y = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.exp, data=t, scale=sc, bias=b)
    nisa.dma_copy(dst=out, src=y)
    return out
)py";
  const int64_t P = 8, F = 16;
  Tensor x = values({P, F}, 0.01f);
  std::vector<float> xv = x.to_f32_vector();
  auto r = run(src, {x});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> y = r->outputs[0].to_f32_vector();
  for (int64_t p = 0; p < P; ++p)
    for (int64_t f = 0; f < F; ++f) {
      const float want = std::exp(xv[static_cast<size_t>(p * F + f)] * static_cast<float>(p + 1) + 0.5f);
      EXPECT_NEAR(y[static_cast<size_t>(p * F + f)], want, 2e-6f * want) << p << "," << f;
    }
}

TEST_F(NkiSelect, GatherFlattenedAndIndirectRows) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(table, ids, picks):
    n, d = table.shape
    rows = nl.ndarray((32, d), dtype=table.dtype, buffer=nl.shared_hbm)
    within = nl.ndarray((32, 4), dtype=table.dtype, buffer=nl.shared_hbm)
    scattered = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(32)[:, None]
    jf = nl.arange(d)[None, :]
    idx = nl.load(ids)                               # [32, 1] int32 row numbers
    got = nl.load(table[idx[ip, 0], jf])             # indirect gather of rows
    nl.store(rows, value=got)
    p = nl.copy(nl.load(picks), dtype=nl.uint32)     # [32, 4] element numbers within each row
    nl.store(within, value=nl.gather_flattened(got, p))
    nl.store(scattered, value=nl.zeros((n, d), dtype=table.dtype, buffer=nl.sbuf))
    nl.store(scattered[idx[ip, 0], jf], value=got)   # indirect scatter back to the same rows
    return rows, within, scattered
)py";
  const int64_t n = 64, d = 8;
  Tensor table = values({n, d});
  std::vector<int64_t> ids, picks;
  for (int64_t p = 0; p < 32; ++p) ids.push_back((p * 7 + 3) % n);
  for (int64_t p = 0; p < 32; ++p)
    for (int64_t j = 0; j < 4; ++j) picks.push_back((p + j * 3) % d);
  auto r =
      run(src, {table, Tensor::from_i64({32, 1}, ids, DType::kInt32), Tensor::from_i64({32, 4}, picks, DType::kInt32)});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> tv = table.to_f32_vector(), rows = r->outputs[0].to_f32_vector(),
                     within = r->outputs[1].to_f32_vector(), sc = r->outputs[2].to_f32_vector();
  std::vector<bool> hit(static_cast<size_t>(n), false);
  for (int64_t p = 0; p < 32; ++p) {
    const int64_t row = ids[static_cast<size_t>(p)];
    hit[static_cast<size_t>(row)] = true;
    for (int64_t f = 0; f < d; ++f)
      EXPECT_EQ(rows[static_cast<size_t>(p * d + f)], tv[static_cast<size_t>(row * d + f)]);
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_EQ(within[static_cast<size_t>(p * 4 + j)],
                tv[static_cast<size_t>(row * d + picks[static_cast<size_t>(p * 4 + j)])]);
  }
  for (int64_t row = 0; row < n; ++row)
    for (int64_t f = 0; f < d; ++f)
      EXPECT_EQ(sc[static_cast<size_t>(row * d + f)],
                hit[static_cast<size_t>(row)] ? tv[static_cast<size_t>(row * d + f)] : 0.0f);

  // A row number past the end is a runtime error at the load.
  ids[5] = n + 3;
  r = run(src, {table, Tensor::from_i64({32, 1}, ids, DType::kInt32), Tensor::from_i64({32, 4}, picks, DType::kInt32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_indirect_index_out_of_bounds") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 14);
}

// dma_copy(dst_rmw_op=nl.add) of an indirect scatter accumulates into the rows the index names,
// each partition in turn (a row named twice gets both), in both dialects and both index forms.
TEST_F(NkiSelect, IndirectScatterAccumulates) {
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x, ids):
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    idx = nl.ndarray((P, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    out = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=x[0:4, :])
    nisa.dma_copy(dst=out.ap(pattern=[[F, P], [1, F]], offset=0, vector_offset=idx, indirect_dim=0), src=t,
                  dst_rmw_op=nl.add)
    return out
)py";
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import numpy as np

@nki.jit
def k(x, ids):
    P, F = x.shape
    out = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x[0:4, :]))
    t = nl.load(x)
    idx = nl.load(ids)
    iy = nl.arange(F)[None, :]
    nisa.dma_copy(dst=out[idx, iy], src=t, dst_rmw_op=np.add)
    return out
)py";
  const int64_t p = 8, f = 6;
  const Tensor x = values({p, f});
  const std::vector<int64_t> ids = {1, 3, 1, 0, 2, 3, 3, 0};
  const std::vector<float> xv = x.to_f32_vector();
  std::vector<float> want(xv.begin(), xv.begin() + 4 * f);
  for (int64_t q = 0; q < p; ++q)
    for (int64_t j = 0; j < f; ++j)
      want[static_cast<size_t>(ids[static_cast<size_t>(q)] * f + j)] += xv[static_cast<size_t>(q * f + j)];
  for (const char* src : {current, legacy}) {
    auto r = run(src, {x, Tensor::from_i64({p, 1}, ids, DType::kInt32)});
    ASSERT_TRUE(r) << r.error().format();
    const auto got = r->outputs[0].to_f32_vector();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
  }
}

// dma_compute: a gather read-modify-write (acc += the rows idx names), then a plain sum of two
// sources into a fresh tile; reduce operators other than add are refused.
TEST_F(NkiSelect, DmaComputeSumsAndReadModifyWrites) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(table, ids):
    n, d = table.shape
    idx = nl.ndarray((8, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    acc = nl.ndarray((8, d), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=acc, src=table[0:8, :])
    rows = table.ap(pattern=[[d, 8], [1, d]], vector_offset=idx, indirect_dim=0)
    nisa.dma_compute(dst=acc, srcs=[rows, acc], reduce_op=nl.add)
    both = nl.ndarray((8, d), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=both, srcs=[table[0:8, :], table[8:16, :]], reduce_op=nl.add)
    out = nl.ndarray((2, 8, d), dtype=table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[0], src=acc)
    nisa.dma_copy(dst=out[1], src=both)
    return out

@nki.jit
def bad(table, ids):
    t = nl.ndarray((8, 4), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_compute(dst=t, srcs=[table[0:8, 0:4], table[8:16, 0:4]], reduce_op=nl.maximum)
    return table
)py";
  const int64_t n = 32, d = 6;
  const Tensor table = values({n, d});
  const std::vector<int64_t> ids = {5, 9, 5, 31, 0, 17, 2, 2};
  const std::vector<float> tv = table.to_f32_vector();
  KernelCall c;
  c.src = kernel_files_from_source(src);
  c.entry = "k";
  c.inputs = {table, Tensor::from_i64({8, 1}, ids, DType::kInt32)};
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  for (int64_t p = 0; p < 8; ++p)
    for (int64_t j = 0; j < d; ++j) {
      const size_t at = static_cast<size_t>(p * d + j);
      EXPECT_FLOAT_EQ(got[at], tv[at] + tv[static_cast<size_t>(ids[static_cast<size_t>(p)] * d + j)]) << p << "," << j;
      EXPECT_FLOAT_EQ(got[static_cast<size_t>(8 * d) + at], tv[at] + tv[static_cast<size_t>(8 * d) + at]) << p;
    }
  c.entry = "bad";
  auto b = python_run(c);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "nkia_unsupported_operator") << b.error().format();
}

// Vector indirection through .ap(vector_offset=idx, indirect_dim=0), both dialects: a gather of
// rows from a column offset (a pattern that reads 6 of each row's 8 elements), and a scatter of the
// gathered tile back into zeroed rows of an output; then the refusals (scalar and vector offset
// together, an SBUF tensor indexed, a pattern without the rows' elements, an index tile of the
// wrong partitions). The first pair's step is not what the index multiplies (the row size is):
// nki-library's topk_reduce passes a shorter one, so any step reads the same rows.
TEST_F(NkiSelect, VectorOffsetGathersAndScattersRows) {
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(table, ids):
    n, d = table.shape
    rows = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.shared_hbm)
    scattered = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((32, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    got = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=got, src=table.ap(pattern=[[d - 2, 32], [1, 6]], offset=2, vector_offset=idx, indirect_dim=0))
    nisa.dma_copy(dst=rows, src=got)
    zero = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.sbuf)
    nisa.memset(dst=zero, value=0.0)
    nisa.dma_copy(dst=scattered, src=zero)
    nisa.dma_copy(dst=scattered.ap(pattern=[[d, 32], [1, 6]], offset=2, vector_offset=idx, indirect_dim=0), src=got)
    return rows, scattered
)py";
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(table, ids):
    n, d = table.shape
    rows = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.shared_hbm)
    scattered = nl.ndarray((n, d), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.load(ids)
    got = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=got, src=table.ap(pattern=[[d, 32], [1, 6]], offset=2, vector_offset=idx, indirect_dim=0))
    nl.store(rows, value=got)
    nl.store(scattered, value=nl.zeros((n, d), dtype=table.dtype, buffer=nl.sbuf))
    nisa.dma_copy(dst=scattered.ap(pattern=[[d, 32], [1, 6]], offset=2, vector_offset=idx, indirect_dim=0), src=got)
    return rows, scattered
)py";
  const int64_t n = 64, d = 8;
  const Tensor table = values({n, d});
  std::vector<int64_t> ids;
  for (int64_t p = 0; p < 32; ++p) ids.push_back((p * 7 + 3) % n);
  const std::vector<float> tv = table.to_f32_vector();
  for (const char* src : {current, legacy}) {
    auto r = run(src, {table, Tensor::from_i64({32, 1}, ids, DType::kInt32)});
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
    const std::vector<float> rows = r->outputs[0].to_f32_vector(), sc = r->outputs[1].to_f32_vector();
    std::vector<bool> hit(static_cast<size_t>(n), false);
    for (int64_t p = 0; p < 32; ++p) {
      const int64_t row = ids[static_cast<size_t>(p)];
      hit[static_cast<size_t>(row)] = true;
      for (int64_t f = 0; f < 6; ++f)
        ASSERT_EQ(rows[static_cast<size_t>(p * 6 + f)], tv[static_cast<size_t>(row * d + 2 + f)]) << p << ", " << f;
    }
    for (int64_t row = 0; row < n; ++row)
      for (int64_t f = 0; f < d; ++f) {
        const bool moved = hit[static_cast<size_t>(row)] && f >= 2;
        ASSERT_EQ(sc[static_cast<size_t>(row * d + f)], moved ? tv[static_cast<size_t>(row * d + f)] : 0.0f)
            << row << ", " << f;
      }
  }
  // A row number past the end is the indirect DMA's runtime error.
  std::vector<int64_t> bad_ids = ids;
  bad_ids[9] = n;
  auto r = run(current, {table, Tensor::from_i64({32, 1}, bad_ids, DType::kInt32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_indirect_index_out_of_bounds") << r.error().format();

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"table.ap(pattern=[[8, 32], [1, 6]], scalar_offset=0, vector_offset=idx)", "nkia_bad_operand"},
      {"got.ap(pattern=[[6, 32], [1, 6]], vector_offset=idx)", "nkia_bad_operand"},
      {"table.ap(pattern=[[8, 32]], vector_offset=idx)", "nkia_bad_operand"},
      {"table.ap(pattern=[[8, 32], [1, 6]], vector_offset=idx, indirect_dim=1)", "nkia_bad_operand"},
      {"table.ap(pattern=[[8, 16], [1, 6]], vector_offset=idx)", "nkia_indirect_index_tile"},
  };
  for (const auto& [expr, code] : refused) {
    const std::string src = std::string(R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(table, ids):
    out = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((32, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    got = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=got, src=)py") +
                            expr + R"py()
    nisa.dma_copy(dst=out, src=got)
    return out
)py";
    auto rr = run(src, {table, Tensor::from_i64({32, 1}, ids, DType::kInt32)});
    ASSERT_FALSE(rr) << expr;
    EXPECT_EQ(rr.error().code, code) << expr << ": " << rr.error().format();
    EXPECT_EQ(rr.error().loc.line, 12) << expr;
  }
  // Other instructions do not take such an access.
  auto rt = run(R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(table, ids):
    out = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((32, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    got = nl.ndarray((32, 6), dtype=table.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=got, src=table.ap(pattern=[[8, 32], [1, 6]], vector_offset=idx, indirect_dim=0))
    nisa.dma_copy(dst=out, src=got)
    return out
)py",
                {table, Tensor::from_i64({32, 1}, ids, DType::kInt32)});
  ASSERT_FALSE(rt);
  EXPECT_EQ(rt.error().code, "nkia_bad_operand") << rt.error().format();
  EXPECT_EQ(rt.error().loc.line, 12);
}

// A DMA gather-transpose: nisa.dma_transpose of t.ap(pattern=[[row, R], [1, E]], vector_offset=idx)
// puts the R rows idx names, transposed, into an [E, R] tile: dst[e, r] = t[idx_flat[r], e]. With
// a [128, N] index tile the rows are read column by column (idx_flat = idx.T.flatten()). Both
// dialects; a row past the end is nkia_indirect_index_out_of_bounds.
TEST_F(NkiSelect, DmaTransposeGathersRowsThroughVectorOffset) {
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(table, ids):
    n, d = table.shape
    P, N = ids.shape
    out = nl.ndarray((d, P * N), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((P, N), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids)
    t = nl.ndarray((d, P * N), dtype=table.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    nisa.dma_transpose(dst=t, src=table.ap(pattern=[[d, P * N], [1, d]], vector_offset=idx, indirect_dim=0))
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(table, ids):
    n, d = table.shape
    P, N = ids.shape
    out = nl.ndarray((d, P * N), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nl.load(ids)
    t = nisa.dma_transpose(table.ap(pattern=[[d, P * N], [1, d]], vector_offset=idx, indirect_dim=0))
    nl.store(out, value=t)
    return out
)py";
  const int64_t n = 300, d = 16;
  const Tensor table = values({n, d});
  const std::vector<float> tv = table.to_f32_vector();
  for (const auto& [p, cols] : std::vector<std::pair<int64_t, int64_t>>{{40, 1}, {128, 2}}) {
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < p * cols; ++i) ids.push_back((i * 11 + 5) % n);
    const Tensor id_tile = Tensor::from_i64({p, cols}, ids, DType::kInt32);
    for (const char* src : {current, legacy}) {
      auto r = run(src, {table, id_tile});
      ASSERT_TRUE(r) << r.error().format();
      const std::vector<float> got = r->outputs[0].to_f32_vector();
      const int64_t rows = p * cols;
      for (int64_t rr = 0; rr < rows; ++rr) {
        const int64_t row = ids[static_cast<size_t>((rr % p) * cols + rr / p)];  // column by column
        for (int64_t e = 0; e < d; ++e)
          ASSERT_EQ(got[static_cast<size_t>(e * rows + rr)], tv[static_cast<size_t>(row * d + e)])
              << p << "x" << cols << " r=" << rr << " e=" << e;
      }
    }
  }
  std::vector<int64_t> bad(40, 3);
  bad[7] = n;
  auto r = run(current, {table, Tensor::from_i64({40, 1}, bad, DType::kInt32)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_indirect_index_out_of_bounds") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 15);
}

// local_gather against its definition: per 16-partition group, the group's uint16 indices read
// partition first and cut to num_valid_indices; each index an element offset from which
// num_elem_per_idx contiguous elements of every partition of the group are copied.
TEST_F(NkiSelect, LocalGatherPerSixteenPartitionGroup) {
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(src, index):
    out = nl.ndarray((32, 20, 4), dtype=src.dtype, buffer=nl.shared_hbm)
    g = nisa.local_gather(nl.load(src), nl.load(index), num_elem_per_idx=4, num_valid_indices=20)
    nl.store(out, value=g)
    return out
)py";
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(src, index):
    out = nl.ndarray((32, 20, 4), dtype=src.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.sbuf)
    i = nl.ndarray(index.shape, dtype=index.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=src)
    nisa.dma_copy(dst=i, src=index)
    g = nl.ndarray((32, 20, 4), dtype=src.dtype, buffer=nl.sbuf)
    nisa.local_gather(dst=g, src_buffer=s, index=i, num_elem_per_idx=4, num_valid_indices=20)
    nisa.dma_copy(dst=out, src=g)
    return out
)py";
  const int64_t P = 32, F = 9 * 4, C = 2, K = 4, N = 20;  // src [32, 9, 4]: 9 logical entries of 4
  Tensor src = values({P, 9, 4}).astype(DType::kBFloat16);
  std::vector<int64_t> index;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t c = 0; c < C; ++c) index.push_back(((p * 5 + c * 3) % 9) * K);  // element offsets
  const std::vector<float> sv = src.to_f32_vector();
  for (const char* kernel : {legacy, current}) {
    auto r = run(kernel, {src, Tensor::from_i64({P, C}, index, DType::kUInt16)});
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(r->outputs[0].dtype(), DType::kBFloat16);
    const std::vector<float> got = r->outputs[0].to_f32_vector();
    ASSERT_EQ(got.size(), static_cast<size_t>(P * N * K));
    for (int64_t p = 0; p < P; ++p) {
      const int64_t g = p / 16;
      for (int64_t j = 0; j < N; ++j) {
        const int64_t at = index[static_cast<size_t>((g * 16 + j % 16) * C + j / 16)];
        for (int64_t t = 0; t < K; ++t)
          EXPECT_EQ(got[static_cast<size_t>((p * N + j) * K + t)], sv[static_cast<size_t>(p * F + at + t)])
              << p << "," << j << "," << t;
      }
    }
  }
  // An offset whose elements run past the partition's end: undefined on the hardware, refused here.
  index[3] = F - 2;
  auto r = run(legacy, {src, Tensor::from_i64({P, C}, index, DType::kUInt16)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_indirect_index_out_of_bounds") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 9);
}

// sequence_bounds against its definition: per element, where its run of equal ids starts and one
// past where it ends; padding (id 0) gets start F and end -1. The public example first, then runs
// of every length, an id that comes back after another, and the edges.
TEST_F(NkiSelect, SequenceBoundsOfSegmentIds) {
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(ids):
    m, n = ids.shape
    out = nl.ndarray([m, 2, n], dtype=ids.dtype, buffer=nl.shared_hbm)
    ix, iy, iz = nl.mgrid[0:m, 0:2, 0:n]
    b = nl.ndarray([m, 2, n], dtype=ids.dtype, buffer=nl.sbuf)
    b[ix, iy, iz] = nisa.sequence_bounds(segment_ids=nl.load(ids))
    nl.store(out, value=b)
    return out
)py";
  const char* current = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(ids):
    m, n = ids.shape
    out = nl.ndarray((m, 2, n), dtype=ids.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(ids.shape, dtype=ids.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=ids)
    b = nl.ndarray((m, 2, n), dtype=ids.dtype, buffer=nl.sbuf)
    nisa.sequence_bounds(dst=b, segment_ids=t)
    nisa.dma_copy(dst=out, src=b)
    return out
)py";
  auto reference = [](const std::vector<int64_t>& ids) {
    const int64_t n = static_cast<int64_t>(ids.size());
    std::vector<int64_t> out(static_cast<size_t>(2 * n));
    for (int64_t i = 0; i < n; ++i) {
      if (ids[static_cast<size_t>(i)] == 0) {
        out[static_cast<size_t>(i)] = n;
        out[static_cast<size_t>(n + i)] = -1;
        continue;
      }
      int64_t lo = i, hi = i + 1;
      while (lo > 0 && ids[static_cast<size_t>(lo - 1)] == ids[static_cast<size_t>(i)]) --lo;
      while (hi < n && ids[static_cast<size_t>(hi)] == ids[static_cast<size_t>(i)]) ++hi;
      out[static_cast<size_t>(i)] = lo;
      out[static_cast<size_t>(n + i)] = hi;
    }
    return out;
  };
  const std::vector<std::vector<int64_t>> inputs = {
      {0, 1, 1, 2, 2, 2, 0, 3, 3},        // the public example: 9 1 1 3 3 3 9 7 7 / -1 3 3 6 6 6 -1 9 9
      {4, 4, 0, 0, 7, 1, 1, 1, 4, 4, 9},  // 4 again after other ids: a run of its own
      {0, 0, 0},
      {5},
      {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1},
  };
  ASSERT_EQ(reference(inputs[0]), (std::vector<int64_t>{9, 1, 1, 3, 3, 3, 9, 7, 7, -1, 3, 3, 6, 6, 6, -1, 9, 9}));
  for (const auto& ids : inputs)
    for (DType dt : {DType::kFloat32, DType::kInt32})
      for (const char* kernel : {legacy, current}) {
        const int64_t n = static_cast<int64_t>(ids.size());
        auto r = run(kernel, {Tensor::from_i64({1, n}, ids, dt)});
        ASSERT_TRUE(r) << r.error().format();
        EXPECT_EQ(r->outputs[0].shape(), (Shape{1, 2, n}));
        EXPECT_EQ(r->outputs[0].dtype(), dt);
        EXPECT_EQ(r->outputs[0].to_i64_vector(), reference(ids)) << dtype_name(dt) << " " << n;
      }
}

// nonzero_with_count works on partitions 0, 16, ..., 112 (one per GpSimd core): the nonzero
// positions (+ index_offset), padding, then the count; the other partitions keep their values.
TEST_F(NkiSelect, NonzeroWithCountOnEveryGpSimdCoresFirstPartition) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    P, T = x.shape
    t = nl.ndarray((P, T), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    d = nl.ndarray((P, T + 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=d, value=5)
    nisa.nonzero_with_count(dst=d, src=t, index_offset=10, padding_val=-3)
    out = nl.ndarray((P, T + 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=d)
    return out
)py";
  const int64_t p = 48, t = 12;
  std::vector<int64_t> in(static_cast<size_t>(p * t));
  for (size_t i = 0; i < in.size(); ++i) in[i] = (i * 7) % 5 == 0 ? 0 : static_cast<int64_t>(i % 9) - 4;
  for (DType dt : {DType::kFloat32, DType::kInt32}) {
    auto r = run(src, {Tensor::from_i64({p, t}, in, dt)}, "trn2");
    ASSERT_TRUE(r) << r.error().format();
    const auto got = r->outputs[0].to_i64_vector();
    for (int64_t row = 0; row < p; ++row) {
      std::vector<int64_t> want(static_cast<size_t>(t + 1), 5);
      if (row % 16 == 0) {
        int64_t n = 0;
        for (int64_t i = 0; i < t; ++i)
          if (in[static_cast<size_t>(row * t + i)] != 0) want[static_cast<size_t>(n++)] = i + 10;
        for (int64_t i = n; i < t; ++i) want[static_cast<size_t>(i)] = -3;
        want[static_cast<size_t>(t)] = n;
        EXPECT_GT(n, 0);
        EXPECT_LT(n, t);
      }
      const std::vector<int64_t> row_got(got.begin() + row * (t + 1), got.begin() + (row + 1) * (t + 1));
      EXPECT_EQ(row_got, want) << dtype_name(dt) << " partition " << row;
    }
  }
  auto trn1 = run(src, {Tensor::from_i64({p, t}, in, DType::kInt32)}, "trn1");
  ASSERT_FALSE(trn1);
  EXPECT_EQ(trn1.error().code, "nkia_feature_not_on_target");
}

TEST_F(NkiSelect, BadOperandsAreRejected) {
  struct Case {
    const char* body;
    const char* code;
  };
  const Case cases[] = {
      {"nisa.max8(dst=d8, src=t[:, 0:4])", "nkia_max8_input_size"},
      {"nisa.nc_find_index8(dst=d8, data=t, vals=d8)", "nkia_find_index8_output_dtype"},
      {"nisa.nc_stream_shuffle(dst=t, src=t, shuffle_mask=[0] * 16)", "nkia_stream_shuffle_operands"},
      {"nisa.activation(dst=t, op=nl.exp, data=t, scale=t)", "err_activation_scale_scalar_or_vector"},
      {"nisa.select_reduce(dst=t, predicate=t, on_true=t, on_false=0.0)", "nkia_predicate_dtype"},
      {"nisa.tensor_partition_reduce(dst=t, op=nl.add, data=t)", "err_store_dst_shape_smaller_than_other_shape"},
      {"nisa.activation(dst=t[16:32, :], op=nl.exp, data=t[0:16, :])", "nkia_partition_start_alignment"},
      {"nisa.tensor_copy(dst=t[0:16, :], src=t[0:32:2, :])", "nkia_partition_not_contiguous"},
      {"nisa.range_select(dst=t, on_true_tile=t, comp_op0=nl.less, comp_op1=nl.less, bound0=t[:, 0:1], "
       "bound1=t[:, 0:1])",
       "nkia_feature_not_on_target"},
      {"nisa.local_gather(dst=d8, src_buffer=t, index=d8)", "nkia_local_gather_layout"},
      {"nisa.sequence_bounds(dst=d8, segment_ids=t)", "nkia_bad_operand"},  // 32 partitions, not 1
      {"nisa.sequence_bounds(dst=t[0:1, 0:8], segment_ids=t[0:1, 0:8])",
       "err_store_dst_shape_smaller_than_other_shape"},
      {"nisa.sequence_bounds(dst=t[0:1, 0:8], segment_ids=nl.ndarray((1, 4), dtype=nl.bfloat16, buffer=nl.sbuf))",
       "nkia_bad_operand"},
  };
  for (const Case& c : cases) {
    std::string src = std::string(R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    t = nl.ndarray((32, 16), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    d8 = nl.ndarray((32, 8), dtype=nl.float32, buffer=nl.sbuf)
    )py") + c.body + "\n    return x\n";
    auto r = run(src, {values({32, 16})});
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().code, c.code) << c.body << "\n" << r.error().format();
    EXPECT_EQ(r.error().loc.line, 11) << c.body;
  }
}

// A runtime row index may follow integer indices of leading (batch) dimensions: t[b, idx, i_f]
// gathers rows of t[b]. A runtime index on a free dimension is still refused.
TEST_F(NkiSelect, IndirectRowsAfterABatchIndex) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(data):
    B, S, C = data.shape
    out = nl.ndarray((B, 128, C), dtype=data.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(B):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(C)[None, :]
        idx = nisa.iota(i_p * 2, dtype=nl.int32)
        nl.store(out[b, i_p, i_f], value=nl.load(data[b, idx, i_f]))
    return out
)py";
  const int64_t B = 2, S = 256, C = 16;
  Tensor data = values({B, S, C});
  auto r = run(src, {data});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> dv = data.to_f32_vector(), o = r->outputs[0].to_f32_vector();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t p = 0; p < 128; ++p)
      for (int64_t c = 0; c < C; ++c)
        ASSERT_EQ(o[static_cast<size_t>((b * 128 + p) * C + c)], dv[static_cast<size_t>((b * S + 2 * p) * C + c)])
            << b << "," << p << "," << c;

  std::string free_dim = src;
  free_dim.replace(free_dim.find("data[b, idx, i_f]"), 17, "data[b, i_p, idx]");
  r = run(free_dim, {data});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "err_indirect_indices_free_dim") << r.error().format();
}

// A masked indirect gather (or scatter) moves only the partitions the mask keeps: the row indices
// of the others are never read, so one past the end is no error; a kept one past the end still is.
TEST_F(NkiSelect, MaskedIndirectRowsCheckOnlyKeptRows) {
  auto src = [](const char* bound) {
    std::string s = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(data):
    R, C = data.shape
    out = nl.ndarray((R, C), dtype=data.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    idx = nisa.iota(i_p, dtype=nl.int32)
    tile = nl.load(data[idx, i_f], mask=(i_p < BOUND))
    nl.store(out[idx, i_f], value=tile, mask=(i_p < R))
    return out
)py";
    return s.replace(s.find("BOUND"), 5, bound);
  };
  Tensor data = values({100, 8});
  auto r = run(src("R"), {data});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), data.to_f32_vector());
  r = run(src("R + 1"), {data});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_indirect_index_out_of_bounds") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 13) << r.error().format();
}

}  // namespace
}  // namespace nki_agent
