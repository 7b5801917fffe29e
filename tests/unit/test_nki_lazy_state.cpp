// The state the NKI core keeps lazily: iteration tags (nki/iteration_tags.h) that hold one tag for a
// tensor written whole and defer writes of parts, and the poison of fresh tensors, laid on the
// elements nothing wrote only when the tensor is first read (settle_poison, nki/nki_tensor.h). Both
// must give exactly what the eager versions give: every element's tag, every unwritten element's
// poison.
#include <gtest/gtest.h>

#include <cmath>
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

constexpr int64_t tag(int64_t loop, int64_t iteration) { return (loop << 32) | iteration; }

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
  tags.set(t, 0, t.numel(), tag(3, 0));
  EXPECT_FALSE(tags.empty());
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), tag(3, 0));

  const Tensor part = t.slice(1, 2, 5).slice(2, 1, 3);  // [8, 3, 2], strided
  tags.set(part, 0, t.numel(), tag(3, 1));
  const std::set<int64_t> in = offsets(part);
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), in.count(off) ? tag(3, 1) : tag(3, 0)) << off;
}

TEST(IterationTags, OtherIterationsOfTheSameLoopOnlyAreFound) {
  const Tensor t = Tensor::zeros({4, 16}, DType::kFloat32);
  IterationTags tags;
  tags.set(t.slice(1, 0, 8), 0, t.numel(), tag(5, 0));   // loop 5, iteration 0: columns 0..7
  tags.set(t.slice(1, 8, 16), 0, t.numel(), tag(6, 2));  // loop 6: columns 8..15
  std::vector<int64_t> found;
  // Iteration 1 of loop 5 reading columns 6..9 meets iteration 0's columns 6 and 7 only.
  EXPECT_EQ(tags.other_iterations(t.slice(1, 6, 10), 0, tag(5, 1), &found), tag(5, 0));
  EXPECT_EQ(found, (std::vector<int64_t>{6, 7, 22, 23, 38, 39, 54, 55}));
  // The same iteration, or a loop that wrote nothing here, meets nothing.
  EXPECT_EQ(tags.other_iterations(t, 0, tag(5, 0), nullptr), 0);
  EXPECT_EQ(tags.other_iterations(t, 0, tag(7, 1), nullptr), 0);
  // Without `out`, the first tag found is still returned.
  EXPECT_EQ(tags.other_iterations(t.slice(1, 10, 12), 0, tag(6, 0), nullptr), tag(6, 2));
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
    tags.set(v, 0, t.numel(), tg);
    for (int64_t off : offsets(v)) expect[static_cast<size_t>(off)] = tg;
    if (w % 7 == 0) {  // reads in between apply what was deferred so far
      for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), expect[static_cast<size_t>(off)]);
    }
  }
  for (int64_t off = 0; off < t.numel(); ++off) ASSERT_EQ(tags.at(off), expect[static_cast<size_t>(off)]);
}

TEST(LazyPoison, SettlingPoisonsExactlyTheElementsNothingWrote) {
  for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kInt32}) {
    auto t = make_nki_tensor({4, 8}, dt, Buffer::kSbuf, "t");
    EXPECT_TRUE(t->poison_pending);
    t->data.fill(3.0);  // stands for whatever the heap held before
    mark_written(Access{t, t->data.slice(1, 0, 5)});
    settle_poison(*t);
    EXPECT_FALSE(t->poison_pending);
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
  EXPECT_FALSE(whole_written->poison_pending);
  settle_poison(*whole_written);
  EXPECT_EQ(whole_written->data.to_f32_vector()[5], 2.0f);

  auto never = make_nki_tensor({2, 3}, DType::kFloat32, Buffer::kSbuf, "n");
  never->data.fill(2.0);
  settle_poison(*never);
  for (float v : never->data.to_f32_vector()) EXPECT_TRUE(std::isnan(v));

  auto timing = make_nki_tensor({2, 3}, DType::kFloat32, Buffer::kSbuf, "timing", /*poisoned=*/false);
  EXPECT_FALSE(timing->poison_pending);
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

}  // namespace
}  // namespace nki_agent
