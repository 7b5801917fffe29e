// Retyped aliases (t.view(dtype), t.ap(..., dtype=)): `base_tensor` names the tensor whose storage a
// tensor or view reads, and writes through an alias land in the original tensor's bytes, with its
// written flags following them (nki/aliases.h) — checked on the values a kernel reads back through
// the original.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

class NkiAliases : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, std::vector<Tensor> inputs) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "k";
    c.inputs = std::move(inputs);
    return python_run(c);
  }
  static std::vector<uint8_t> bytes(const Tensor& t) {
    const Tensor c = t.contiguous();
    const auto* b = static_cast<const uint8_t*>(c.data());
    return std::vector<uint8_t>(b, b + c.nbytes());
  }
  static Tensor ramp(const Shape& s, DType dtype) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 37) * 0.375f - 5.0f;
    return Tensor::from_f32(s, v, dtype);
  }
};

// base_tensor: a tensor's own, a slice's tensor, and the tensor a retyped alias reads (its own type and
// shape); nki-library allocates and copies weights in that type, then views the copy again.
TEST_F(NkiAliases, BaseTensorIsTheTensorOwningTheStorage) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(w):
    assert w.base_tensor.dtype == w.dtype and tuple(w.base_tensor.shape) == (64, 8)
    assert tuple(w[0:32, 2:4].base_tensor.shape) == (64, 8)
    v = w.view(nl.bfloat16)
    assert tuple(v.shape) == (64, 16) and v.dtype == nl.bfloat16
    base = v.base_tensor
    assert base.dtype == nl.float32 and tuple(base.shape) == (64, 8)
    assert v.view(nl.int16).base_tensor.dtype == nl.float32
    sb = nl.ndarray(base.shape, dtype=base.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=base)
    sb = sb.view(v.dtype)
    out = nl.ndarray(sb.shape, dtype=sb.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=sb)
    return out
)py";
  const Tensor w = ramp({64, 8}, DType::kFloat32);
  auto r = run(src, {w});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].dtype(), DType::kBFloat16);
  EXPECT_EQ(r->outputs[0].shape(), (Shape{64, 16}));
  EXPECT_EQ(bytes(r->outputs[0]), bytes(w));  // the float32 bits, read as bfloat16 halves
}

// A tile written through an .ap(dtype=) view of another type of the same size (nki-library copies
// fp8 x4 activations as float32 this way, selective_expert_mx_impl.py) holds the bits in its own type.
TEST_F(NkiAliases, WritesThroughAnApDtypeViewLandInTheTensor) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    P, F = a.shape
    x = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    t = nl.ndarray((P, F), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t.ap(pattern=[[F, P], [1, F]], offset=0, dtype=nl.float32), src=x)
    out = nl.ndarray((P, F), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  const Tensor a = ramp({128, 8}, DType::kFloat32);
  auto r = run(src, {a});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
  EXPECT_EQ(r->outputs[0].dtype(), DType::kInt32);
  EXPECT_EQ(bytes(r->outputs[0]), bytes(a));
}

// Elements of another size: bfloat16 values DMA'd into a .view(bfloat16) of a float32 tile are the
// tile's bytes; writing half of the alias leaves the other float32 elements unwritten, as reported.
TEST_F(NkiAliases, WritesThroughAViewOfAnotherSizeAndTheirFlags) {
  const char* src = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(h):
    P, F2 = h.shape
    t = nl.ndarray((P, F2 // 2), dtype=nl.float32, buffer=nl.sbuf)
    v = t.view(nl.bfloat16)
    nisa.dma_copy(dst=v[:, 0:COLS], src=h[:, 0:COLS])
    out = nl.ndarray((P, F2 // 2), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  const Tensor h = ramp({128, 16}, DType::kBFloat16);
  {
    std::string s = src;
    s.replace(s.find("COLS"), 4, "16");
    s.replace(s.find("COLS"), 4, "16");
    auto r = run(s, {h});
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
    EXPECT_EQ(bytes(r->outputs[0]), bytes(h));
  }
  {
    std::string s = src;
    s.replace(s.find("COLS"), 4, "6");
    s.replace(s.find("COLS"), 4, "6");
    auto r = run(s, {h});
    ASSERT_TRUE(r) << r.error().format();
    const std::vector<uint8_t> got = bytes(r->outputs[0]), want = bytes(h);
    for (size_t row = 0; row < 128; ++row)  // the 6 bfloat16 values written, 12 bytes of 32 a row
      for (size_t b = 0; b < 12; ++b) ASSERT_EQ(got[row * 32 + b], want[row * 32 + b]) << row << "," << b;
    ASSERT_FALSE(r->warnings.empty());
    EXPECT_EQ(r->warnings.front().code, "nkia_uninitialized_read") << r->warnings.front().format();
    EXPECT_NE(r->warnings.front().message.find("[0, 3]"), std::string::npos) << r->warnings.front().message;
  }
}

}  // namespace
}  // namespace nki_agent
