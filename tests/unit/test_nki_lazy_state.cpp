// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The state the NKI core keeps lazily: iteration tags (nki/iteration_tags.h) that hold one tag for a
// tensor written whole and defer writes of parts, and the poison of fresh tensors, laid on the
// elements nothing wrote only when the tensor is first read (settle_poison, nki/nki_tensor.h). Both
// must give exactly what the eager versions give: every element's tag, every unwritten element's
// poison.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "nki/iteration_tags.h"
#include "nki/nki_tensor.h"
#include "nki/written.h"
#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

constexpr int64_t tag(int64_t loop, int64_t iteration) {
  return (loop << 32) | iteration;
}

// The offsets (from the storage's start) of the elements `view` selects, element by element.
std::set<int64_t> offsets(const Tensor& view) {
  std::set<int64_t> out;
  const Shape& shape = view.shape();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < view.numel(); ++k) {
    int64_t off = view.offset();
    for (size_t d = 0; d < shape.size(); ++d) off += idx[d] * view.strides()[d];
    out.insert(off);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

TEST(IterationTags, AWholeWriteTagsEveryElementAndAPartialOneOnlyItsOwn) {
  const Tensor t = Tensor::zeros({8, 6, 4}, DType::kFloat32);
  IterationTags tags;
  EXPECT_TRUE(tags.empty());
  tags.set(t, t, tag(3, 0));
  EXPECT_FALSE(tags.empty());
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), tag(3, 0));

  const Tensor part = t.slice(1, 2, 5).slice(2, 1, 3);  // [8, 3, 2], strided
  tags.set(part, t, tag(3, 1));
  const std::set<int64_t> in = offsets(part);
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), in.count(off) ? tag(3, 1) : tag(3, 0)) << off;
}

TEST(IterationTags, ViewsThatAreSlicesOfTheirTensorAreBoxes) {
  const Tensor t = Tensor::zeros({4, 3, 8}, DType::kFloat32);
  EXPECT_EQ(view_box(t, t), (std::vector<int64_t>{0, 4, 0, 3, 0, 8}));
  EXPECT_EQ(view_box(t.select(1, 2).slice(1, 2, 6), t), (std::vector<int64_t>{0, 4, 2, 3, 2, 6}));
  EXPECT_EQ(view_box(t.slice(0, 1, 3).transpose(), t), (std::vector<int64_t>{1, 3, 0, 3, 0, 8}));
  EXPECT_FALSE(view_box(t.slice(2, 0, 8, 2), t));                        // a step of 2
  EXPECT_FALSE(view_box(Tensor::zeros({4, 3, 8}, DType::kFloat32), t));  // another storage
  EXPECT_TRUE(boxes_intersect({0, 4, 2, 3}, {3, 5, 0, 3}));
  EXPECT_FALSE(boxes_intersect({0, 4, 2, 3}, {3, 5, 0, 2}));
}

TEST(IterationTags, OtherIterationsOfTheSameLoopOnlyAreFound) {
  const Tensor t = Tensor::zeros({4, 16}, DType::kFloat32);
  IterationTags tags;
  tags.set(t.slice(1, 0, 8), t, tag(5, 0));   // loop 5, iteration 0: columns 0..7
  tags.set(t.slice(1, 8, 16), t, tag(6, 2));  // loop 6: columns 8..15
  std::vector<int64_t> found;
  // Iteration 1 of loop 5 reading columns 6..9 meets iteration 0's columns 6 and 7 only.
  EXPECT_EQ(tags.other_iterations(t.slice(1, 6, 10), t, tag(5, 1), &found), tag(5, 0));
  EXPECT_EQ(found, (std::vector<int64_t>{6, 7, 22, 23, 38, 39, 54, 55}));
  // The same iteration, or a loop that wrote nothing here, meets nothing.
  EXPECT_EQ(tags.other_iterations(t, t, tag(5, 0), nullptr), 0);
  EXPECT_EQ(tags.other_iterations(t, t, tag(7, 1), nullptr), 0);
  // Without `out`, the first tag found is still returned.
  EXPECT_EQ(tags.other_iterations(t.slice(1, 10, 12), t, tag(6, 0), nullptr), tag(6, 2));
}

TEST(IterationTags, ManyPartialWritesAgreeWithAnElementByElementRecord) {
  // Random strided views of a [6, 5, 7] tensor, more writes than the deferred list holds, against
  // a plain per-element array.
  const Tensor t = Tensor::zeros({6, 5, 7}, DType::kFloat32);
  IterationTags tags;
  std::vector<int64_t> expect(static_cast<size_t>(t.numel()), 0);
  Rng rng(7, 1);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n)); };
  for (int w = 0; w < 200; ++w) {
    Tensor v = t;
    for (int ax = 0; ax < 3; ++ax) {
      const int64_t n = t.shape()[static_cast<size_t>(ax)];
      const int64_t lo = pick(n), hi = lo + 1 + pick(n - lo);
      v = v.slice(ax, lo, hi);
    }
    if (w % 3 == 0) v = v.transpose();
    if (w % 50 == 49) v = t;  // now and then the whole tensor
    const int64_t tg = tag(1 + w % 2, w);
    // Before the write: whether v meets another iteration of tg's loop, against the record.
    bool meets = false;
    for (int64_t off : offsets(v)) {
      const int64_t e = expect[static_cast<size_t>(off)];
      meets = meets || (e != 0 && e != tg && (e >> 32) == (tg >> 32));
    }
    ASSERT_EQ(tags.other_iterations(v, t, tg, nullptr) != 0, meets) << "write " << w;
    tags.set(v, t, tg);
    for (int64_t off : offsets(v)) expect[static_cast<size_t>(off)] = tg;
    if (w % 7 == 0) {  // reads in between apply what was deferred so far
      for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), expect[static_cast<size_t>(off)]);
    }
  }
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), expect[static_cast<size_t>(off)]);
}

TEST(IterationTags, ALongListOfBoxesAgreesWithAnElementByElementRecord) {
  // A tensor large enough that box-shaped parts are kept as a list far past the short one (one per
  // 4096 elements: 128 here): 300 random blocks from iterations of two loops, checked against a
  // plain per-element array before each write, with no read applying them until the end.
  const Tensor t = Tensor::zeros({64, 8192}, DType::kFloat32);
  IterationTags tags;
  std::vector<int64_t> expect(static_cast<size_t>(t.numel()), 0);
  Rng rng(11, 2);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n)); };
  int met = 0;
  for (int w = 0; w < 300; ++w) {
    const int64_t r0 = pick(64), c0 = pick(8192);
    Tensor v = t.slice(0, r0, std::min<int64_t>(64, r0 + 1 + pick(8)))
                   .slice(1, c0, std::min<int64_t>(8192, c0 + 1 + pick(256)));
    if (w % 4 == 0) v = v.transpose();
    const int64_t tg = tag(1 + w % 2, w);
    bool meets = false;
    for (int64_t off : offsets(v)) {
      const int64_t e = expect[static_cast<size_t>(off)];
      meets = meets || (e != 0 && e != tg && (e >> 32) == (tg >> 32));
    }
    met += meets;
    ASSERT_EQ(tags.other_iterations(v, t, tg, nullptr) != 0, meets) << "write " << w;
    tags.set(v, t, tg);
    for (int64_t off : offsets(v)) expect[static_cast<size_t>(off)] = tg;
  }
  EXPECT_GT(met, 0) << "the blocks never met: the test checks nothing";
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), expect[static_cast<size_t>(off)]);
}

TEST(LazyPoison, SettlingPoisonsExactlyTheElementsNothingWrote) {
  for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kInt32}) {
    auto t = make_nki_tensor({4, 8}, dt, Buffer::kSbuf, "t");
    EXPECT_TRUE(t->lazy.poison_pending);
    t->data.fill(3.0);  // stands for whatever the heap held before
    mark_written(Access{t, t->data.slice(1, 0, 5)});
    settle_poison(*t);
    EXPECT_FALSE(t->lazy.poison_pending);
    const std::vector<float> f = t->data.to_f32_vector();
    for (int64_t p = 0; p < 4; ++p)
      for (int64_t j = 0; j < 8; ++j) {
        const float v = f[static_cast<size_t>(p * 8 + j)];
        if (j < 5) {
          EXPECT_EQ(v, 3.0f) << dtype_name(dt);
        } else if (dtype_is_float(dt)) {
          EXPECT_TRUE(std::isnan(v)) << dtype_name(dt);
        } else {
          EXPECT_EQ(v, static_cast<float>(kPoisonInt)) << dtype_name(dt);
        }
      }
    // Settling again changes nothing: the poison is laid once.
    t->data.fill(1.0);
    settle_poison(*t);
    EXPECT_EQ(t->data.to_f32_vector()[7], 1.0f);
  }
}

TEST(LazyPoison, ATensorWrittenWholeOwesNoPoisonAndOneNeverWrittenIsAllPoison) {
  auto whole_written = make_nki_tensor({2, 3}, DType::kFloat32, Buffer::kSbuf, "w");
  whole_written->data.fill(2.0);
  mark_written(whole(whole_written));
  EXPECT_FALSE(whole_written->lazy.poison_pending);
  settle_poison(*whole_written);
  EXPECT_EQ(whole_written->data.to_f32_vector()[5], 2.0f);

  auto never = make_nki_tensor({2, 3}, DType::kFloat32, Buffer::kSbuf, "n");
  never->data.fill(2.0);
  settle_poison(*never);
  for (float v : never->data.to_f32_vector()) EXPECT_TRUE(std::isnan(v));

  auto timing = make_nki_tensor({2, 3}, DType::kFloat32, Buffer::kSbuf, "timing", Poison::kNone);
  EXPECT_FALSE(timing->lazy.poison_pending);
  auto now = make_nki_tensor({2, 3}, DType::kFloat32, Buffer::kSbuf, "now", Poison::kNow);
  EXPECT_FALSE(now->lazy.poison_pending);
  for (float v : now->data.to_f32_vector()) EXPECT_TRUE(std::isnan(v));
}

// Through a kernel: a tile recycles the memory of one that held real data; the half the kernel
// does not load must read back as NaN, not as the old tile's values.
TEST(LazyPoison, AKernelReadingPartOfARecycledTileSeesPoisonNotOldData) {
  ASSERT_TRUE(python_host_init());
  KernelCall c;
  c.src = kernel_files_from_source(R"py(
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def recycle(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.sequential_range(3):
        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        if i < 2:
            nisa.dma_copy(dst=t, src=x)
        else:
            nisa.dma_copy(dst=t[:, 0:256], src=x[:, 0:256])
            u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0)
            nisa.dma_copy(dst=out, src=u)
    return out
)py");
  c.entry = "recycle";
  c.inputs = {Tensor::full({128, 512}, DType::kFloat32, 2.0)};
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 1u);
  const std::vector<float> o = r->outputs[0].to_f32_vector();
  for (int64_t p = 0; p < 128; ++p)
    for (int64_t j = 0; j < 512; ++j) {
      const float v = o[static_cast<size_t>(p * 512 + j)];
      if (j < 256) {
        ASSERT_EQ(v, 3.0f) << p << ", " << j;
      } else {
        ASSERT_TRUE(std::isnan(v)) << p << ", " << j << ": " << v;
      }
    }
  EXPECT_FALSE(r->warnings.empty());  // the unwritten half reaches the output
}

TEST(PendingCopiesUnit, AMatchingReadIsInPlaceAndAWriteIntoTheSourceCarriesTheCopyOut) {
  auto hbm = make_nki_tensor({256, 64}, DType::kFloat32, Buffer::kSharedHbm, "x");
  hbm->data.fill(7.0);
  mark_written(whole(hbm));
  auto tile = make_nki_tensor({128, 2, 64}, DType::kFloat32, Buffer::kSbuf, "t");
  const Access src{hbm, hbm->data.slice(0, 128, 256)}, dst{tile, tile->data.select(1, 0)};
  ASSERT_TRUE(defer_copy(dst, src, src.view));
  mark_written(dst);
  EXPECT_EQ(read_view(dst).storage(), hbm->data.storage());  // read in place
  EXPECT_EQ(tile->lazy.pending_copies.size(), 1u);
  // The other block has no copy pending: read as it is, the copy still waits.
  const Access other{tile, tile->data.select(1, 1)};
  EXPECT_EQ(read_view(other).storage(), tile->data.storage());
  EXPECT_EQ(tile->lazy.pending_copies.size(), 1u);
  // A part of the block, not the copy's own view: the copy is carried out first.
  const Access part{tile, tile->data.select(1, 0).slice(1, 0, 8)};
  EXPECT_EQ(read_view(part).storage(), tile->data.storage());
  EXPECT_TRUE(tile->lazy.pending_copies.empty());
  EXPECT_EQ(tile->data.select(1, 0).to_f32_vector()[100], 7.0f);

  // Writing the source carries out the copies that read it, before the write.
  ASSERT_TRUE(defer_copy(other, src, src.view));
  before_write(src);
  EXPECT_TRUE(tile->lazy.pending_copies.empty());
  EXPECT_EQ(tile->data.select(1, 1).to_f32_vector()[5], 7.0f);
  // A conversion or a destination that is not a box of its tile is copied at once.
  auto bf = make_nki_tensor({128, 64}, DType::kBFloat16, Buffer::kSbuf, "b");
  EXPECT_FALSE(defer_copy(whole(bf), src, src.view));
  const Access strided{tile, tile->data.select(1, 0).slice(1, 0, 64, 2)};
  EXPECT_FALSE(defer_copy(strided, Access{hbm, hbm->data.slice(0, 0, 128).slice(1, 0, 32)},
                          hbm->data.slice(0, 0, 128).slice(1, 0, 32)));
}

// Pending DMA copies (nki/nki_tensor.h: defer_copy, read_view, before_write, settle) give what
// copies carried out at once give, whatever comes between the copy and the read.
class PendingCopies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(python_host_init()); }
  static std::vector<float> run(const char* src, const char* entry, std::vector<Tensor> inputs) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    auto r = python_run(c);
    EXPECT_TRUE(r) << r.error().format();
    if (!r || r->outputs.empty()) return {};
    EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
    return r->outputs[0].to_f32_vector();
  }
  // [rows, cols] with element (i, j) = base + i * cols + j.
  static Tensor ramp(int64_t rows, int64_t cols, float base) {
    std::vector<float> v(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < v.size(); ++i) v[i] = base + static_cast<float>(i);
    return Tensor::from_f32({rows, cols}, v);
  }
};

TEST_F(PendingCopies, ATileLoadedBeforeItsSourceIsOverwrittenKeepsTheOldValues) {
  const auto out = run(R"py(
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def reload(x, y):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    scratch = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.private_hbm)
    u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=x)
    nisa.dma_copy(dst=scratch, src=u)
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=scratch)
    v = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=v, src=y)
    nisa.dma_copy(dst=scratch, src=v)
    w = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=w, src=t)
    nisa.dma_copy(dst=out, src=w)
    return out
)py",
                       "reload", {ramp(128, 64, 0.0f), ramp(128, 64, 100000.0f)});
  ASSERT_EQ(out.size(), 128u * 64u);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(i)) << i;
}

TEST_F(PendingCopies, OverlappingCopiesAndWritesLandInProgramOrder) {
  // t <- x; t[:, 0:16] = 5; t[:, 8:24] <- y[:, 0:16]; t[:, 20:32] <- z[:, 0:12]; out <- t.
  const auto out = run(R"py(
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def layers(x, y, z):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.memset(dst=t[:, 0:16], value=5.0)
    nisa.dma_copy(dst=t[:, 8:24], src=y[:, 0:16])
    nisa.dma_copy(dst=t[:, 20:32], src=z[:, 0:12])
    nisa.dma_copy(dst=out, src=t)
    return out
)py",
                       "layers", {ramp(128, 64, 0.0f), ramp(128, 64, 10000.0f), ramp(128, 64, 20000.0f)});
  ASSERT_EQ(out.size(), 128u * 64u);
  for (int64_t i = 0; i < 128; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      float want = static_cast<float>(i * 64 + j);
      if (j < 8)
        want = 5.0f;
      else if (j < 20)
        want = 10000.0f + static_cast<float>(i * 64 + (j - 8));
      else if (j < 32)
        want = 20000.0f + static_cast<float>(i * 64 + (j - 20));
      ASSERT_EQ(out[static_cast<size_t>(i * 64 + j)], want) << i << ", " << j;
    }
}

TEST_F(PendingCopies, AMatmulReadsLoadedBlocksInPlaceAndOverwrittenOnesAsWritten) {
  // Blocks of the moving operand loaded by DMA into one [K, 2, N] tile; block 1 is then scaled on
  // the Vector engine, so the matmul reads block 0 from HBM in place and block 1 as computed.
  const auto out = run(R"py(
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def mm(lhsT, rhs):
    out = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 2, 64), dtype=nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((128, 2, 96), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(2):
        nisa.dma_copy(dst=a[:, k, :], src=lhsT[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=b[:, k, :], src=rhs[k * 128:(k + 1) * 128, :])
    nisa.tensor_scalar(dst=b[:, 1, :], data=b[:, 1, :], op0=nl.multiply, operand0=2.0)
    acc = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        nisa.nc_matmul(dst=acc, stationary=a[:, k, :], moving=b[:, k, :])
    res = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
)py",
                       "mm", {ramp(256, 64, -8000.0f), ramp(256, 96, -12000.0f)});
  ASSERT_EQ(out.size(), 64u * 96u);
  const Tensor lhsT = ramp(256, 64, -8000.0f), rhs = ramp(256, 96, -12000.0f);
  const std::vector<float> l = lhsT.to_f32_vector(), r = rhs.to_f32_vector();
  for (int64_t m = 0; m < 64; m += 7)
    for (int64_t n = 0; n < 96; n += 5) {
      double want = 0;
      for (int64_t k = 0; k < 256; ++k)
        want += static_cast<double>(l[static_cast<size_t>(k * 64 + m)]) * r[static_cast<size_t>(k * 96 + n)] *
                (k >= 128 ? 2.0 : 1.0);
      EXPECT_NEAR(out[static_cast<size_t>(m * 96 + n)], want, std::abs(want) * 1e-5) << m << ", " << n;
    }
}

TEST_F(PendingCopies, AScalarOffsetLoadedByDmaIsReadAfterTheCopy) {
  // The 1 x 1 offset tile is loaded from HBM (a pending copy) and read by .ap(scalar_offset=).
  const auto out = run(R"py(
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def pick(x, off):
    R, F = x.shape
    out = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.shared_hbm)
    row = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=row, src=off)
    t = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap(pattern=[[F, 4], [1, F]], offset=0, scalar_offset=row))
    nisa.dma_copy(dst=out, src=t)
    return out
)py",
                       "pick", {ramp(16, 8, 0.0f), Tensor::from_i64({1, 1}, std::vector<int64_t>{9}, DType::kInt32)});
  ASSERT_EQ(out.size(), 32u);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(9 * 8 + i)) << i;
}

// Random programs over one SBUF tile and two HBM sources, run with lazy and with eager state: DMA
// loads of random boxes (some from a scratch HBM tensor the program also rewrites, from the tile
// and from HBM), memsets, Vector-engine copies between blocks, matmuls reading blocks, stores.
// Every output byte and every warning must agree.
TEST_F(PendingCopies, RandomProgramsGiveTheSameBytesLazyAndEager) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed, 77);
    auto pick = [&](int64_t n) { return static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(n)); };
    std::string body;
    int outputs = 0;
    for (int step = 0; step < 60; ++step) {
      const int64_t j = pick(4), j2 = pick(4), c0 = pick(64), c1 = c0 + 1 + pick(64 - c0);
      const int64_t p0 = pick(128), p1 = p0 + 1 + pick(128 - p0), r0 = pick(385);
      std::string line;
      switch (pick(10)) {
        case 0:
          line =
              fmt::format("nisa.dma_copy(dst=t[:, {}, {}:{}], src=x[{}:{}, {}:{}])", j, c0, c1, r0, r0 + 128, c0, c1);
          break;
        case 1:
          line = fmt::format("nisa.dma_copy(dst=t[{}:{}, {}, :], src=y[{}:{}, :])", p0, p1, j, r0, r0 + (p1 - p0));
          break;
        case 2: line = fmt::format("nisa.memset(dst=t[:, {}, {}:{}], value={}.5)", j, c0, c1, pick(9)); break;
        case 3:
          line = fmt::format(
              "nisa.tensor_scalar(dst=t[:, {}, :], data=t[:, {}, :], op0=nl.multiply, operand0=2.0, op1=nl.add, "
              "operand1=1.0)",
              j2, j);
          break;
        case 4: line = fmt::format("nisa.dma_copy(dst=s[:, {}:{}], src=t[:, {}, :])", j * 64, j * 64 + 64, j); break;
        case 8:  // the scratch source rewritten from HBM: the tile's pending copies from it go first
          line = fmt::format("nisa.dma_copy(dst=s[:, {}:{}], src=y[{}:{}, :])", j * 64, j * 64 + 64, r0, r0 + 128);
          break;
        case 5:
        case 9: line = fmt::format("nisa.dma_copy(dst=t[:, {}, :], src=s[:, {}:{}])", j2, j * 64, j * 64 + 64); break;
        case 6:
          line = fmt::format(
              "acc = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.psum)\n"
              "    nisa.nc_matmul(dst=acc, stationary=t[:, {}, :], moving=t[:, {}, :])\n"
              "    u = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.sbuf)\n"
              "    nisa.tensor_copy(dst=u, src=acc)\n"
              "    nisa.dma_copy(dst=mm[{}], src=u)",
              j, j2, outputs % 8);
          ++outputs;
          break;
        default: line = fmt::format("nisa.dma_copy(dst=t[:, {}, :], src=x[{}:{}, :])", j, r0, r0 + 128);
      }
      body += "    " + line + "\n";
    }
    const std::string src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def prog(x, y):
    out = nl.ndarray((128, 4, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    mm = nl.ndarray((8, 64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.private_hbm)
    t = nl.ndarray((128, 4, 64), dtype=nl.float32, buffer=nl.sbuf)
    z = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0.0)
    nisa.dma_copy(dst=s, src=z)
    for i in range(8):
        nisa.dma_copy(dst=mm[i], src=z[0:64, 0:64])
)py" + body + R"py(    nisa.dma_copy(dst=out, src=t)
    return out, mm
)py";
    std::vector<KernelOutcome> got;
    for (bool eager : {false, true}) {
      KernelCall c;
      c.src = kernel_files_from_source(src);
      c.entry = "prog";
      c.inputs = {ramp(512, 64, 0.25f), ramp(512, 64, -3000.0f)};
      c.eager_state = eager;
      auto r = python_run(c);
      ASSERT_TRUE(r) << "seed " << seed << (eager ? " eager" : " lazy") << ": " << r.error().format() << "\n" << src;
      got.push_back(std::move(*r));
    }
    ASSERT_EQ(got[0].outputs.size(), 2u);
    for (size_t o = 0; o < 2; ++o) {
      const Tensor a = got[0].outputs[o].contiguous(), b = got[1].outputs[o].contiguous();
      ASSERT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.nbytes())), 0)
          << "seed " << seed << " output " << o << "\n"
          << src;
    }
    ASSERT_EQ(got[0].warnings.size(), got[1].warnings.size()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace nki_agent
