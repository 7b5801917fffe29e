// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The first slice of the NKI language on the instruction core, in both dialects: tensors in HBM
// and SBUF, slicing, loads and stores, elementwise math, nki.isa in both forms, and the compiler's
// checks reported with their catalogue codes at the kernel's own line.
#include <gtest/gtest.h>

#include <cmath>
#include <span>

#include "runtime/python/py_host.h"
#include "tensor/ops.h"

namespace nki_agent {
namespace {

class NkiLang : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, const std::string& entry, std::vector<Tensor> inputs) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    return python_run(c);
  }
  static Tensor iota(const Shape& s, DType t = DType::kFloat32, float scale = 0.01f) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 97) - 48) * scale;
    return Tensor::from_f32(s, v, t);
  }
};

// The tensor-add tutorial, legacy dialect: tiles of 128 partitions, loads, nl.add, stores.
constexpr const char* kLegacyAdd = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    for i in nl.affine_range(rows // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, 0:cols])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        z = nl.add(x, y)
        nl.store(out[i * 128:(i + 1) * 128, :], value=z)
    return out
)py";

// The same with the current dialect's explicit-destination instructions.
constexpr const char* kCurrentAdd = R"py(
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def add_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    for i in range(rows // 128):
        x = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        y = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[nl.ds(i * 128, 128), :])
        nisa.dma_copy(dst=y, src=b[nl.ds(i * 128, 128), :])
        z = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=z)
    return out
)py";

TEST_F(NkiLang, TensorAddInBothDialects) {
  for (DType t : {DType::kFloat32, DType::kBFloat16}) {
    Tensor a = iota({256, 64}, t), b = iota({256, 64}, t, 0.03f);
    Tensor want = binary(BinaryOp::kAdd, a, b);  // fp32 arithmetic, one rounding into t
    for (const char* src : {kLegacyAdd, kCurrentAdd}) {
      auto r = run(src, "add_kernel", {a, b});
      ASSERT_TRUE(r) << r.error().format();
      ASSERT_EQ(r->outputs.size(), 1u);
      EXPECT_EQ(r->outputs[0].dtype(), t);
      EXPECT_EQ(r->outputs[0].to_f32_vector(), want.to_f32_vector());
    }
  }
}

TEST_F(NkiLang, ElementwiseMathOperatorsAndScalars) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa
import numpy as np

@nki.jit
def k(a):
    out = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.exp(x) * 2.0 + 1          # ACT exp, then DVE tensor_scalar
    z = nisa.activation(op=nl.tanh, data=y, scale=0.5)
    w = nl.maximum(z, x) - nl.zeros((128, 32), dtype=nl.float32)
    w[:, 0:4] = 7.0                  # memset through a view
    nl.store(out, value=w)
    return out
)py";
  Tensor a = iota({128, 32});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector(), got = r->outputs[0].to_f32_vector();
  for (size_t i = 0; i < av.size(); ++i) {
    float y = std::exp(av[i]) * 2.0f + 1.0f;
    float z = std::tanh(y * 0.5f);
    float w = std::max(z, av[i]);
    if (i % 32 < 4) w = 7.0f;
    EXPECT_NEAR(got[i], w, 1e-6f) << i;
  }
}

TEST_F(NkiLang, DtypesCompareWithNumPyAndNames) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import numpy as np

@nki.jit
def k(a):
    assert a.dtype == nl.float32 and a.dtype == np.float32 and a.dtype == 'float32'
    assert nl.bfloat16 != np.float32 and nl.bfloat16 == 'bf16'
    t = nl.load(a, dtype=nl.bfloat16)
    assert t.dtype == nl.bfloat16 and t.buffer == 'sbuf'
    return a
)py";
  auto r = run(src, "k", {iota({4, 4})});
  ASSERT_TRUE(r) << r.error().format();
}

TEST_F(NkiLang, UnwrittenOutputIsPoisoned) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((256, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out[0:128, :], value=nl.load(a[0:128, :]))  # rows 128..255 never written
    return out
)py";
  auto r = run(src, "k", {iota({256, 8})});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> v = r->outputs[0].to_f32_vector();
  EXPECT_FALSE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[128 * 8]));
  EXPECT_TRUE(std::isnan(v.back()));
}

struct MustFail {
  const char* name;
  const char* body;  // the kernel body; the failing statement is on its last line
  const char* code;
};

// Runs each body inside a legacy @nki.jit kernel k(a) and expects its code, with a hint, at the
// body's last line.
void expect_failures(std::span<const MustFail> cases, const Tensor& input) {
  for (const auto& c : cases) {
    std::string src = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n@nki.jit\ndef k(a):\n" +
                      std::string(c.body) + "    return None\n";  // old style: the input may be written
    int last_line = 5;
    for (const char* p = c.body; *p; ++p) last_line += *p == '\n';
    KernelCall call;
    call.src = kernel_files_from_source(src);
    call.entry = "k";
    call.inputs = {input};
    auto r = python_run(call);
    ASSERT_FALSE(r) << c.name;
    EXPECT_EQ(r.error().code, c.code) << c.name << ": " << r.error().format();
    EXPECT_EQ(r.error().loc.line, last_line) << c.name << ": " << r.error().format();
    EXPECT_FALSE(r.error().hint.empty()) << c.name;
  }
}

TEST_F(NkiLang, CompilerChecksCarryCatalogueCodesAndLines) {
  const MustFail cases[] = {
      {"partition limit", "    t = nl.ndarray((256, 8), dtype=nl.float32, buffer=nl.sbuf)\n",
       "err_num_partition_exceed_arch_limit"},
      {"compute on HBM", "    t = nl.exp(a)\n", "err_unsupported_memory"},
      {"partition mismatch", "    x = nl.load(a[0:128, :])\n    y = nl.load(a[0:64, :])\n    z = nl.add(x, y)\n",
       "err_num_partition_mismatch"},
      {"out of bounds", "    x = nl.load(a[0:128, 0:16])\n", "err_tensor_access_out_of_bound"},
      {"init value in HBM", "    t = nl.zeros((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)\n",
       "err_hbm_tensor_with_init_value_not_supported"},
      {"store shape", "    x = nl.load(a[0:128, :])\n    nl.store(a[0:64, :], value=x)\n",
       "err_store_dst_shape_smaller_than_other_shape"},
      {"rank", "    t = nl.ndarray((128,), dtype=nl.float32, buffer=nl.sbuf)\n", "nkia_insufficient_rank"},
  };
  expect_failures(cases, iota({128, 8}));
}

// A legacy matmul lands where its result is used; a rule it breaks is reported at the call.
TEST_F(NkiLang, ALegacyMatmulIsReportedAtItsCall) {
  const char* src = R"py(import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(a, b):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    r = nisa.nc_matmul(x, y)
    nl.store(out, value=r)
    return out
)py";
  auto r = run(src, "k", {iota({128, 128}), iota({128, 1024})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().loc.line, 10) << r.error().format();
}

// NumPy on a tile says so at its line, in every command (verify's static policy says the same).
TEST_F(NkiLang, NumPyOnATileIsHostMath) {
  for (const char* call : {"np.maximum(t, 0)", "np.exp(t)", "np.sum(t)", "np.asarray(t)", "np.where(t > 0, t, 0)"}) {
    const std::string src =
        std::string(
            "import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"
            "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    y = ") +
        call +
        "\n    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
        "    nl.store(out, value=y)\n    return out\n";
    auto r = run(src, "k", {iota({128, 8})});
    ASSERT_FALSE(r) << call;
    EXPECT_EQ(r.error().code, "nkia_host_math_on_tile") << call << ": " << r.error().format();
    EXPECT_EQ(r.error().loc.line, 8) << call;
  }
  // A NumPy scalar on the left of an operator is a constant: the tile's operator computes it.
  auto scalar =
      run("import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"
          "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    y = np.float32(2.0) * t - np.float32(1.0)\n"
          "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
          "    nl.store(out, value=np.float32(3.0) - y)\n    return out\n",
          "k", {iota({128, 8})});
  ASSERT_TRUE(scalar) << scalar.error().format();
  const auto in = iota({128, 8}).to_f32_vector();
  EXPECT_NEAR(scalar->outputs[0].to_f32_vector()[3], 3.0f - (2.0f * in[3] - 1.0f), 1e-6);
  // Shapes are known while the kernel is traced: np.shape / np.ndim / np.size of a tile work.
  auto ok =
      run("import numpy as np\nimport neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"
          "@nki.jit\ndef k(a):\n    t = nl.load(a)\n    assert np.shape(t) == (128, 8) and np.ndim(t) == 2\n"
          "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
          "    nl.store(out, value=nl.multiply(t, float(np.size(t))))\n    return out\n",
          "k", {iota({128, 8})});
  ASSERT_TRUE(ok) << ok.error().format();
}

// Local `t: nt.tensor[...] = value` annotations are checked against the value's shape (the loader
// rewrites them); every other annotation stays inert, even one that would fail to evaluate.
TEST_F(NkiLang, LocalTensorAnnotationsAreChecked) {
  const char* ok = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t: nt.tensor[128, 8] = nl.load(a)
    u: nt.tensor[(128, 8), nl.float32] = nl.add(t, 1.0)
    n: int = 2
    w: nt.tensor = nl.multiply(u, n)
    z: undefined_module.tensor[1, 2] = w
    nl.store(out, value=z)
    return out
)py";
  auto r = run(ok, "k", {iota({128, 8})});
  ASSERT_TRUE(r) << r.error().format();
  const std::vector<float> in = iota({128, 8}).to_f32_vector(), got = r->outputs[0].to_f32_vector();
  for (size_t i = 0; i < in.size(); ++i) EXPECT_FLOAT_EQ(got[i], (in[i] + 1.0f) * 2.0f) << i;

  const MustFail cases[] = {
      {"annotated shape",
       "    import neuronxcc.nki.typing as nt\n    x: nt.tensor[128, 8] = nl.load(a)\n"
       "    y: nt.tensor[128, 4] = nl.load(a[:, 0:8])\n",
       "err_annotation_shape_mismatch"},
  };
  expect_failures(cases, iota({128, 8}));
}

// nl.par_dim: block dimensions exist in the legacy dialect only; a partition dimension marked first
// is still accepted in the current one.
TEST_F(NkiLang, CurrentDialectRefusesBlockDimensions) {
  const char* first = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((nl.par_dim(128), 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
)py";
  auto r = run(first, "k", {iota({128, 8})});
  ASSERT_TRUE(r) << r.error().format();
  std::string blocks = first;
  blocks.replace(blocks.find("(nl.par_dim(128), 8)"), 20, "(2, nl.par_dim(64), 8)");
  r = run(blocks, "k", {iota({128, 8})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "err_leading_dimension_of_tensor_must_be_partition") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 9);
}

TEST_F(NkiLang, OldStyleTrailingOutputArgumentsAreWrittenBack) {
  const char* src = R"py(
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def scale_kernel(a, out):
    nl.store(out, value=nl.multiply(nl.load(a), 3.0))

def host(a):
    out = np.zeros_like(a)
    result = nki.simulate_kernel(scale_kernel, a, out)
    assert result is None
    return out
)py";
  Tensor a = iota({128, 16});
  auto r = run(src, "host", {a});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(),
            binary(BinaryOp::kMultiply, a, Tensor::full({}, DType::kFloat32, 3)).to_f32_vector());
}

// Legacy indexing with index tiles: nl.arange on each axis, shifted per tile; nl.mgrid; a flat
// (1-D) HBM tensor addressed by an affine expression of two index tiles; a transposed access.
TEST_F(NkiLang, IndexTilesSelectAffineAccessPatterns) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a, flat):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    tr = nl.ndarray((cols, 128), dtype=a.dtype, buffer=nl.shared_hbm)
    twice = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    ix = nl.arange(128)[:, None]
    iy = nl.arange(cols)[None, :]
    for t in nl.affine_range(rows // 128):
        tile = nl.load(a[t * 128 + ix, iy])
        nl.store(out[t * 128 + ix, iy], value=nl.multiply(tile, 2.0))
    i = nl.mgrid[0:128, 0:cols]
    nl.store(twice[i.p, i.x], value=nl.load(flat[i.p * cols + i.x]))
    ic = nl.arange(cols)[:, None]
    ip = nl.arange(128)[None, :]
    nl.store(tr[ic, ip], value=nl.load(a[ip, ic]))   # a[0:128, :] read transposed: [cols, 128]
    return out, twice, tr
)py";
  Tensor a = iota({256, 16});
  Tensor flat = a.slice(0, 0, 128).contiguous().reshape({128 * 16});
  auto r = run(src, "k", {a, flat});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 3u);
  EXPECT_EQ(r->outputs[0].to_f32_vector(),
            binary(BinaryOp::kMultiply, a, Tensor::full({}, DType::kFloat32, 2)).to_f32_vector());
  EXPECT_EQ(r->outputs[1].to_f32_vector(), a.slice(0, 0, 128).to_f32_vector());
  EXPECT_EQ(r->outputs[2].to_f32_vector(), a.slice(0, 0, 128).transpose().to_f32_vector());
}

TEST_F(NkiLang, IndexTileMisuseHasCatalogueCodes) {
  const MustFail cases[] = {
      {"1-D arange", "    t = nl.load(a[nl.arange(128)])\n", "err_1d_arange_not_supported"},
      {"mixed indexing", "    t = nl.load(a[nl.arange(128)[:, None], :])\n",
       "err_unsupported_mixing_basic_advanced_tensor_indexing"},
      {"arange out of bounds", "    t = nl.load(a[nl.arange(128)[:, None], nl.arange(16)[None, :]])\n",
       "err_tensor_access_out_of_bound"},
      {"modulo in a mask", "    i = nl.arange(8)[None, :]\n    t = nl.exp(nl.load(a), mask=(i % 2 == 0))\n",
       "err_unsupported_expression_in_mask"},
      {"modulo in an index", "    i = nl.arange(8)[None, :]\n    t = nl.load(a[nl.arange(128)[:, None], i % 2])\n",
       "nkia_bad_index"},
      {"assignment into an index tile", "    i = nl.mgrid[0:128, 0:8]\n    i.x[...] = 2 * i.x\n",
       "err_cannot_assign_to_index"},
  };
  expect_failures(cases, iota({128, 8}));
}

// A mask's comparison selects exactly the positions where it holds, for every operator, both signs
// of the coefficient, equalities without a solution and bounds outside the axis: the instruction
// writes that box and nothing else (positions found by bisection, checked here one by one).
TEST_F(NkiLang, MaskComparisonsSelectExactlyThePositionsWhereTheyHold) {
  struct Case {
    const char* pred;  // over j = nl.arange(16)[None, :] or p = nl.arange(128)[:, None]
    bool on_partitions;
    bool (*holds)(int);
  };
  const Case cases[] = {
      {"j < 5", false, [](int x) { return x < 5; }},
      {"j <= 5", false, [](int x) { return x <= 5; }},
      {"j > 5", false, [](int x) { return x > 5; }},
      {"j >= 5", false, [](int x) { return x >= 5; }},
      {"2 * j + 3 < 20", false, [](int x) { return 2 * x + 3 < 20; }},
      {"7 - j >= 0", false, [](int x) { return 7 - x >= 0; }},
      {"-3 * j + 40 > 0", false, [](int x) { return -3 * x + 40 > 0; }},
      {"j * 3 == 9", false, [](int x) { return x * 3 == 9; }},
      {"j * 2 == 9", false, [](int) { return false; }},
      {"j != 0", false, [](int x) { return x != 0; }},
      {"j - 15 != 0", false, [](int x) { return x != 15; }},
      {"j != 40", false, [](int) { return true; }},
      {"j < 0", false, [](int) { return false; }},
      {"j < 100", false, [](int) { return true; }},
      {"j >= 16", false, [](int) { return false; }},
      {"p < 100", true, [](int x) { return x < 100; }},
      {"64 + p >= 128", true, [](int x) { return 64 + x >= 128; }},
  };
  for (const Case& c : cases) {
    const std::string src = std::string(R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    j = nl.arange(16)[None, :]
    p = nl.arange(128)[:, None]
    r = nl.zeros((128, 16), dtype=nl.float32, buffer=nl.sbuf)
    r[...] = nl.add(nl.load(a), 1.0, mask=()py") +
                            c.pred + R"py())
    nl.store(out, value=r)
    return out
)py";
    auto r = run(src, "k", {Tensor::zeros({128, 16}, DType::kFloat32)});
    ASSERT_TRUE(r) << c.pred << ": " << r.error().format();
    const std::vector<float> v = r->outputs[0].to_f32_vector();
    for (int row = 0; row < 128; ++row)
      for (int col = 0; col < 16; ++col) {
        const bool want = c.holds(c.on_partitions ? row : col);
        ASSERT_EQ(v[static_cast<size_t>(row * 16 + col)], want ? 1.0f : 0.0f)
            << c.pred << " at [" << row << ", " << col << "]";
      }
  }
  // A hole inside the axis is not a box.
  const MustFail holes[] = {
      {"!= inside the axis", "    j = nl.arange(8)[None, :]\n    t = nl.exp(nl.load(a), mask=(j != 3))\n",
       "err_unsupported_expression_in_mask"},
  };
  expect_failures(holes, iota({128, 8}));
}

// The tiled-matmul tutorial in both dialects: PSUM accumulation over K tiles, copy out of PSUM.
TEST_F(NkiLang, TiledMatmulInBothDialects) {
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        for n in nl.affine_range(N // 512):
            res = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                b = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                res += nl.matmul(a, b, transpose_x=True)
            nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], value=nl.copy(res, dtype=out.dtype))
    return out
)py";
  const char* current = R"py(
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def matmul_kernel(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in range(M // 128):
        for n in range(N // 512):
            res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in range(K // 128):
                a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                nisa.nc_matmul(dst=res, stationary=a, moving=b)   # first write overwrites, then adds
            r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=r, src=res)
            nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=r)
    return out
)py";
  for (DType t : {DType::kFloat32, DType::kBFloat16}) {
    Tensor lhsT = iota({256, 256}, t), rhs = iota({256, 1024}, t, 0.02f);
    Tensor want = matmul(lhsT.transpose(), rhs, DType::kFloat32);
    for (const char* src : {legacy, current}) {
      auto r = run(src, "matmul_kernel", {lhsT, rhs});
      ASSERT_TRUE(r) << r.error().format();
      std::vector<float> got = r->outputs[0].to_f32_vector(), ref = want.to_f32_vector();
      ASSERT_EQ(got.size(), ref.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-4f * (1 + std::fabs(ref[i]))) << i;
    }
  }
}

TEST_F(NkiLang, SoftmaxTransposeAndReductions) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def k(x):
    P, F = x.shape
    soft = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    tr = nl.ndarray((F, P), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nl.max(t, axis=1, keepdims=True)
    e = nl.exp(t - m)
    s = nl.sum(e, axis=[1], keepdims=True)
    nl.store(soft, value=e / s)
    nl.store(tr, value=nl.copy(nl.transpose(t)))
    neg = nisa.tensor_reduce(nl.maximum, t, axis=1, negate=True)
    assert tuple(neg.shape) == (P, 1)  # a free-axis reduction is a [P, 1] column here
    return soft, tr
)py";
  Tensor x = iota({128, 64});
  auto r = run(src, "k", {x});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> xv = x.to_f32_vector(), got = r->outputs[0].to_f32_vector();
  for (int p = 0; p < 128; ++p) {
    float mx = -INFINITY, sum = 0;
    for (int f = 0; f < 64; ++f) mx = std::max(mx, xv[p * 64 + f]);
    for (int f = 0; f < 64; ++f) sum += std::exp(xv[p * 64 + f] - mx);
    for (int f = 0; f < 64; ++f) ASSERT_NEAR(got[p * 64 + f], std::exp(xv[p * 64 + f] - mx) / sum, 1e-6f);
  }
  EXPECT_EQ(r->outputs[1].to_f32_vector(), x.transpose().to_f32_vector());
}

TEST_F(NkiLang, MatmulAndReduceChecks) {
  const MustFail cases[] = {
      // Reported at the call, not where the result is first used.
      {"matmul from HBM", "    r = nl.matmul(a, a, transpose_x=True)\n", "err_unsupported_memory"},
      {"moving too wide",
       "    x = nl.load(a[0:128, 0:128])\n    y = nl.ndarray((128, 1024), dtype=nl.float32)\n"
       "    p = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)\n    p += nl.matmul(x, y, "
       "transpose_x=True)\n",
       "err_size_of_dimension_exceed_arch_limit"},
      {"fp32 with bf16",
       "    x = nl.load(a[0:128, 0:128])\n    y = nl.load(a[0:128, 0:128], dtype=nl.bfloat16)\n"
       "    p = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)\n    p += nl.matmul(x, y, transpose_x=True)\n",
       "nkia_matmul_input_dtype"},
      {"reduce the partitions", "    x = nl.load(a[0:128, 0:128])\n    s = nl.sum(x, axis=0)\n", "nkia_reduce_axes"},
      {"transpose too big", "    x = nl.load(a[0:128, 0:256])\n    t = nl.transpose(x)\n",
       "err_size_of_dimension_exceed_arch_limit"},
  };
  expect_failures(cases, iota({128, 256}));
}

// Causal masks, iota, per-partition operands and block tensors (nl.par_dim).
TEST_F(NkiLang, MasksIotaPartitionOperandsAndBlockTensors) {
  const char* legacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def k(a):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ids = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    cen = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    blk_out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    ix = nl.arange(128)[:, None]
    iy = nl.arange(128)[None, :]
    t = nl.load(a)
    nl.store(out, value=nisa.affine_select(iy <= ix, t, -9984.0))
    nl.store(ids, value=nisa.iota(ix * 128 + iy, dtype=nl.float32))
    m = nl.max(t, axis=1, keepdims=True)
    nl.store(cen, value=nisa.tensor_scalar(t, nl.subtract, m, op1=nl.multiply, operand1=2.0))
    blocks = nl.ndarray((2, nl.par_dim(128), 64), dtype=nl.float32, buffer=nl.sbuf)
    for b in nl.affine_range(2):
        blocks[b] = nl.load(a[:, b * 64:(b + 1) * 64])
    nl.store(blk_out, value=nl.add(blocks[0], blocks[1]))
    return out, ids, cen, blk_out
)py";
  Tensor a = iota({128, 128});
  auto r = run(legacy, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector();
  std::vector<float> sel = r->outputs[0].to_f32_vector(), ids = r->outputs[1].to_f32_vector(),
                     cen = r->outputs[2].to_f32_vector(), blk = r->outputs[3].to_f32_vector();
  for (int p = 0; p < 128; ++p) {
    float mx = -INFINITY;
    for (int f = 0; f < 128; ++f) mx = std::max(mx, av[p * 128 + f]);
    for (int f = 0; f < 128; ++f) {
      const size_t i = static_cast<size_t>(p * 128 + f);
      EXPECT_EQ(sel[i], f <= p ? av[i] : -9984.0f) << p << "," << f;
      EXPECT_EQ(ids[i], static_cast<float>(p * 128 + f));
      EXPECT_EQ(cen[i], (av[i] - mx) * 2.0f);
    }
    for (int f = 0; f < 64; ++f)
      EXPECT_EQ(blk[static_cast<size_t>(p * 64 + f)], av[p * 128 + f] + av[p * 128 + 64 + f]);
  }
}

TEST_F(NkiLang, CurrentDialectIotaAndAffineSelectPatterns) {
  const char* current = R"py(
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(a):
    out = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    pos = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    s = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    # keep where p - f >= 0 (value = p * 1 + f * -1)
    nisa.affine_select(dst=s, pattern=[[-1, 32]], channel_multiplier=1, on_true_tile=t, on_false_value=0.0,
                       cmp_op=nl.greater_equal)
    nisa.dma_copy(dst=out, src=s)
    i = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(dst=i, pattern=[[1, 32]], offset=5, channel_multiplier=100)
    nisa.dma_copy(dst=pos, src=i)
    assert nisa.get_nc_version() == nisa.nc_version.gen2
    return out, pos
)py";
  Tensor a = iota({64, 32});
  auto r = run(current, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector(), sel = r->outputs[0].to_f32_vector(), pos = r->outputs[1].to_f32_vector();
  for (int p = 0; p < 64; ++p)
    for (int f = 0; f < 32; ++f) {
      const size_t i = static_cast<size_t>(p * 32 + f);
      EXPECT_EQ(sel[i], p - f >= 0 ? av[i] : 0.0f);
      EXPECT_EQ(pos[i], static_cast<float>(5 + 100 * p + f));
    }
}

// affine_select against its definition at every position: each comparison, rising, falling and
// flat expressions (an equality that holds nowhere, once, or along a whole row), a 3-D tile, a
// destination that is every other column of a wider tile, and the result in its own or another type.
TEST_F(NkiLang, AffineSelectKeepsExactlyThePositionsItsPredicateHolds) {
  struct Pattern {
    Shape shape;                 // [P, free...]
    std::vector<int64_t> steps;  // one per free axis
    int64_t offset, cm;
  };
  const std::vector<Pattern> patterns = {
      {{64, 40}, {-1}, 0, 1},    // causal: p - f
      {{64, 40}, {3}, -50, -2},  // rising along the row, falling across partitions
      {{64, 40}, {-7}, 100, 0},  // falling, the same on every partition
      {{64, 40}, {0}, -20, 1},   // flat along the row
      {{64, 40}, {4}, -2, 0},    // an equality that never holds (4f - 2)
      {{16, 5, 7}, {7, -1}, -3, 2},
  };
  const std::vector<std::string> cmps = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
  const std::vector<std::pair<DType, DType>> types = {
      {DType::kFloat32, DType::kFloat32}, {DType::kFloat32, DType::kBFloat16}, {DType::kBFloat16, DType::kBFloat16}};
  for (const Pattern& pat : patterns)
    for (const std::string& cmp : cmps)
      for (const auto& [in_t, out_t] : types) {
        const bool strided = pat.shape.size() == 2;  // dst: every other column of a wider tile
        std::string shape = "(";
        for (int64_t d : pat.shape) shape += std::to_string(d) + ", ";
        shape += ")";
        std::string pattern = "[";
        for (size_t a = 0; a < pat.steps.size(); ++a)
          pattern += "[" + std::to_string(pat.steps[a]) + ", " + std::to_string(pat.shape[a + 1]) + "], ";
        pattern += "]";
        const std::string out_name = out_t == DType::kFloat32 ? "float32" : "bfloat16";
        const int64_t f = pat.shape[1];
        const std::string dst = strided ? "nl.ndarray((P, " + std::to_string(2 * f) + "), dtype=nl." + out_name +
                                              ", buffer=nl.sbuf)" + "[:, 0:" + std::to_string(2 * f) + ":2]"
                                        : "nl.ndarray(" + shape + ", dtype=nl." + out_name + ", buffer=nl.sbuf)";
        const std::string src = R"py(
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(a):
    P = a.shape[0]
    out = nl.ndarray()py" + shape +
                                ", dtype=nl." + out_name + R"py(, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    s = )py" + dst + R"py(
    nisa.affine_select(dst=s, pattern=)py" +
                                pattern + ", offset=" + std::to_string(pat.offset) +
                                ", channel_multiplier=" + std::to_string(pat.cm) +
                                ", on_true_tile=t, on_false_value=-7.3, cmp_op=nl." + cmp + R"py()
    nisa.dma_copy(dst=out, src=s)
    return out
)py";
        SCOPED_TRACE(src);
        Tensor a = iota(pat.shape, in_t, 0.37f);
        auto r = run(src, "k", {a});
        ASSERT_TRUE(r) << r.error().format();
        // The definition: value = offset + cm * p + sum(step * index) at each position.
        std::vector<float> want = a.to_f32_vector();
        const int64_t n = shape_numel(pat.shape);
        for (int64_t i = 0; i < n; ++i) {
          int64_t rest = i, value = pat.offset;
          for (size_t ax = pat.shape.size(); ax-- > 1;) {
            value += pat.steps[ax - 1] * (rest % pat.shape[ax]);
            rest /= pat.shape[ax];
          }
          value += pat.cm * rest;
          const bool holds = cmp == "equal"        ? value == 0
                             : cmp == "not_equal"  ? value != 0
                             : cmp == "less"       ? value < 0
                             : cmp == "less_equal" ? value <= 0
                             : cmp == "greater"    ? value > 0
                                                   : value >= 0;
          if (!holds) want[static_cast<size_t>(i)] = -7.3f;
        }
        const std::vector<float> expected = Tensor::from_f32(pat.shape, want).astype(out_t).to_f32_vector();
        const std::vector<float> got = r->outputs[0].to_f32_vector();
        ASSERT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "at flat position " << i;
      }
}

// Scans (cumsum), normalisation statistics, activation with a reduction, DMA transposes and
// shared constants.
TEST_F(NkiLang, ScansStatisticsTransposedLoadsAndConstants) {
  const char* src = R"py(
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def k(a):
    P, F = a.shape
    csum = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    stats = nl.ndarray((P, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    rowsum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    tr = nl.ndarray((F, P), dtype=nl.float32, buffer=nl.shared_hbm)
    eye = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a)
    ones = nl.ones((P, F), dtype=nl.float32)
    nl.store(csum, value=nisa.tensor_tensor_scan(ones, t, 0.0, nl.multiply, nl.add))   # r = 1 * r + x
    st = nisa.bn_stats(t)
    nl.store(stats, value=nisa.bn_aggr(st))
    red = nl.ndarray((P, 1), dtype=nl.float32)
    nisa.activation_reduce(nl.exp, t, reduce_op=nl.add, reduce_res=red)
    nl.store(rowsum, value=red)
    nl.store(tr, value=nl.load_transpose2d(a))
    ident = nl.load(nl.shared_identity_matrix(P, dtype=nl.float32))
    res = nl.zeros((P, F), nl.float32, buffer=nl.psum)
    res += nl.matmul(ident, t, transpose_x=True)   # I.T @ t == t
    nl.store(eye, value=nl.copy(res))
    return csum, stats, rowsum, tr, eye
)py";
  Tensor a = iota({128, 64});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector(), cs = r->outputs[0].to_f32_vector(), st = r->outputs[1].to_f32_vector(),
                     rs = r->outputs[2].to_f32_vector();
  for (int p = 0; p < 128; ++p) {
    float run_sum = 0;
    double mean = 0, var = 0, esum = 0;
    for (int f = 0; f < 64; ++f) {
      run_sum += av[p * 64 + f];
      EXPECT_EQ(cs[static_cast<size_t>(p * 64 + f)], run_sum);
      mean += av[p * 64 + f] / 64.0;
      esum += std::exp(static_cast<double>(av[p * 64 + f]));
    }
    for (int f = 0; f < 64; ++f) var += (av[p * 64 + f] - mean) * (av[p * 64 + f] - mean) / 64.0;
    EXPECT_NEAR(st[static_cast<size_t>(p * 2)], mean, 1e-6);
    EXPECT_NEAR(st[static_cast<size_t>(p * 2 + 1)], var, 1e-6);
    EXPECT_NEAR(rs[static_cast<size_t>(p)], esum, 1e-4 * esum);
  }
  EXPECT_EQ(r->outputs[3].to_f32_vector(), a.transpose().to_f32_vector());
  EXPECT_EQ(r->outputs[4].to_f32_vector(), av);
}

TEST_F(NkiLang, ApisOutsideAKernelAreRefused) {
  auto r = run("import neuronxcc.nki.language as nl\ndef host(a):\n    return nl.ndarray((2, 2), dtype=nl.float32)\n",
               "host", {iota({2, 2})});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "err_nki_api_outside_of_nki_kernel");
  EXPECT_EQ(r.error().loc.line, 3);
}

// .ap(scalar_offset=...): the row a 1 x 1 int32 tile holds (computed by the kernel: 3 + 2) or a
// Python int picks the rows the pattern reads (offset + value * row size); vector_offset is
// refused with a diagnostic, not ignored.
constexpr const char* kApScalarOffset = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def pick_rows(x):
    R, F = x.shape
    out = nl.ndarray((2, 4, F), dtype=x.dtype, buffer=nl.shared_hbm)
    row = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.iota(dst=row, pattern=[[0, 1]], offset=3)
    nisa.tensor_scalar(dst=row, data=row, op0=nl.add, operand0=2)
    t = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap(pattern=[[F, 4], [1, F]], offset=0, scalar_offset=row))
    nisa.dma_copy(dst=out[0], src=t)
    u = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=x.ap(pattern=[[F, 4], [1, F]], offset=F, scalar_offset=10))
    nisa.dma_copy(dst=out[1], src=u)
    return out

@nki.jit
def pick_in_reshape(x):
    (N,) = x.shape
    out = nl.ndarray((1, 4), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 4), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.reshape((1, N)).ap(pattern=[[N, 1], [1, 4]], offset=0, scalar_offset=3, indirect_dim=1))
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def gather_rows(x):
    R, F = x.shape
    out = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.shared_hbm)
    idx = nl.ndarray((4, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=idx, value=1)
    t = nl.ndarray((4, F), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap(pattern=[[F, 4], [1, F]], offset=0, vector_offset=idx, indirect_dim=0))
    nisa.dma_copy(dst=out, src=t)
    return out
)py";

TEST_F(NkiLang, ApScalarOffsetPicksRowsFromATileOrAnInt) {
  const Tensor x = iota({16, 32});
  auto r = run(kApScalarOffset, "pick_rows", {x});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs.at(0).to_f32_vector(), in = x.to_f32_vector();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t f = 0; f < 32; ++f) {
      EXPECT_EQ(got[static_cast<size_t>(i * 32 + f)], in[static_cast<size_t>((5 + i) * 32 + f)]) << i << "," << f;
      EXPECT_EQ(got[static_cast<size_t>(128 + i * 32 + f)], in[static_cast<size_t>((11 + i) * 32 + f)]) << i;
    }
  // On a reshape of the whole tensor, indirect_dim counts the reshape's axes: axis 1 of [1, 16]
  // moves by single elements.
  const Tensor v = iota({16});
  auto flat = run(kApScalarOffset, "pick_in_reshape", {v});
  ASSERT_TRUE(flat) << flat.error().format();
  const auto vin = v.to_f32_vector();
  EXPECT_EQ(flat->outputs.at(0).to_f32_vector(), (std::vector<float>{vin[3], vin[4], vin[5], vin[6]}));
  // vector_offset: every partition's index is 1, so each row of the result is x's row 1
  // (test_nki_select VectorOffsetGathersAndScattersRows covers distinct rows and scatters).
  auto g = run(kApScalarOffset, "gather_rows", {x});
  ASSERT_TRUE(g) << g.error().format();
  const auto gathered = g->outputs.at(0).to_f32_vector();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t f = 0; f < 32; ++f)
      EXPECT_EQ(gathered[static_cast<size_t>(i * 32 + f)], in[static_cast<size_t>(32 + f)]) << i << "," << f;
}

// nl.affine_range iterations may accumulate into one tile (acc += t, acc[...] = nl.add(acc, t)):
// each iteration rewrites what it read. Passing a value on to the next iteration (run[c + 1] =
// run[c] + t) is nkia_affine_range_carried_dependency, at the read (tests/kernels/fail/
// affine_range_prefix_sum.py); the same loop as nl.sequential_range is fine.
constexpr const char* kAffineAccumulate = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def accumulate(x):
    n, P, F = x.shape
    out = nl.ndarray((2, P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((P, F), dtype=nl.float32, buffer=nl.sbuf)
    acc2 = nl.zeros((P, F), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        t = nl.load(x[i])
        acc += t
        acc2[...] = nl.add(acc2, t)
    nl.store(out[0], value=acc)
    nl.store(out[1], value=acc2)
    return out

@nki.jit
def running(x):
    n, P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    run = nl.zeros((P, n + 1, F), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(n):
        run[:, i + 1, :] = nl.add(run[:, i, :], nl.load(x[i]))
    nl.store(out, value=run[:, n, :])
    return out
)py";

TEST_F(NkiLang, AffineRangeAccumulationIsNotACarriedDependency) {
  const Tensor x = iota({3, 128, 16});
  const auto in = x.to_f32_vector();
  for (const char* entry : {"accumulate", "running"}) {
    auto r = run(kAffineAccumulate, entry, {x});
    ASSERT_TRUE(r) << entry << ": " << r.error().format();
    const auto got = r->outputs.at(0).to_f32_vector();
    for (size_t k = 0; k < got.size(); ++k) {
      const size_t e = k % (128 * 16);
      ASSERT_FLOAT_EQ(got[k], in[e] + in[e + 128 * 16] + in[e + 2 * 128 * 16]) << entry << " " << k;
    }
  }
}

// A legacy block tensor, (blocks, par_dim(P), F1, F2), indexed t[b, :, i, j] is a [P, 1] column:
// the `:` is on its partition axis (the one after the blocks), not on axis 0.
TEST_F(NkiLang, BlockTensorRankOneViewIsAColumn) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((128, 2), dtype=a.dtype, buffer=nl.shared_hbm)
    col = nl.load(a[:, 0:1])
    blk = nl.zeros((2, nl.par_dim(128), 2, 2), dtype=a.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(2):
        blk[b, :, 0, 1] = nl.add(col, float(b + 1))
    assert tuple(blk[1, :, 0, 1].shape) == (128, 1)
    sub = blk[1]
    assert tuple(sub[:, 0, 1].shape) == (128, 1), sub[:, 0, 1].shape
    nl.store(out[:, 0:1], value=blk[0, :, 0, 1])
    nl.store(out[:, 1:2], value=blk[1, :, 0, 1])
    return out
)py";
  Tensor a = iota({128, 4});
  auto r = run(src, "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector(), o = r->outputs[0].to_f32_vector();
  for (size_t p = 0; p < 128; ++p) {
    EXPECT_FLOAT_EQ(o[p * 2], av[p * 4] + 1.0f) << p;
    EXPECT_FLOAT_EQ(o[p * 2 + 1], av[p * 4] + 2.0f) << p;
  }
}

// nl.load of one element (every axis an integer) is a [1, 1] tile, which broadcasts as a number.
TEST_F(NkiLang, LoadOfOneElementIsAOneByOneTile) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a, s):
    out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(1):
        sigma = nl.load(s[b + 1, 2], dtype=nl.float32)
        assert tuple(sigma.shape) == (1, 1), sigma.shape
        col = nl.add(nl.zeros((nl.par_dim(128), 1), dtype=nl.float32), sigma)
        nl.store(out, value=nl.add(nl.load(a), col))
    return out
)py";
  Tensor a = iota({128, 1}), s = iota({2, 4}, DType::kFloat32, 0.5f);
  auto r = run(src, "k", {a, s});
  ASSERT_TRUE(r) << r.error().format();
  const float sigma = s.to_f32_vector()[6];
  std::vector<float> av = a.to_f32_vector(), o = r->outputs[0].to_f32_vector();
  for (size_t p = 0; p < 128; ++p) EXPECT_FLOAT_EQ(o[p], av[p] + sigma) << p;
}

// The legacy nisa.nc_matmul of a Tensor-engine nc_transpose result (a PSUM tile) copies it to SBUF
// first, as the compiler legalises it (nki-samples' flash_attn_bwd does this); the copy is a Vector
// engine instruction of its own.
TEST_F(NkiLang, LegacyNcMatmulStagesAPsumOperand) {
  const char* src = R"py(
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(a, b):
    out = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.shared_hbm)
    a_t = nisa.nc_transpose(nl.load(a))
    assert a_t.buffer == "psum"
    res = nl.zeros((128, 256), dtype=np.float32, buffer=nl.psum)
    res[...] += nisa.nc_matmul(a_t, nl.load(b))
    nl.store(out, value=nl.copy(res))
    return out
)py";
  Tensor a = iota({128, 128}), b = iota({128, 256}, DType::kFloat32, 0.02f);
  auto r = run(src, "k", {a, b});
  ASSERT_TRUE(r) << r.error().format();
  std::vector<float> av = a.to_f32_vector(), bv = b.to_f32_vector(), o = r->outputs[0].to_f32_vector();
  for (size_t i = 0; i < 128; i += 17)
    for (size_t j = 0; j < 256; j += 13) {
      double want = 0;
      for (size_t kk = 0; kk < 128; ++kk) want += static_cast<double>(av[i * 128 + kk]) * bv[kk * 256 + j];
      EXPECT_NEAR(o[i * 256 + j], want, 1e-3 + 1e-4 * std::abs(want)) << i << "," << j;
    }
}

// A slice running past the tensor's end is cut back by a mask that excludes the excess (the last,
// partial tile of rows); without a mask, or with one that leaves part of the excess, it is refused.
TEST_F(NkiLang, MaskedSlicePastTheEnd) {
  auto src = [](const std::string& mask) {
    std::string s = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    R, F = a.shape
    out = nl.ndarray((R, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range((R + 127) // 128):
        start = t * 128
        i_p = nl.arange(128)[:, None] + start
        sb = nl.zeros((nl.par_dim(128), F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(src=a[start:start + 128, :], dst=sb[:, :]MASK)
        nl.store(out[start:start + 128, :], value=sb, mask=(i_p < R))
    return out
)py";
    return s.replace(s.find("MASK"), 4, mask);
  };
  Tensor a = iota({288, 64});
  auto r = run(src(", mask=(i_p < R)"), "k", {a});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), a.to_f32_vector());
  for (const char* mask : {"", ", mask=(i_p < R + 1)"}) {
    r = run(src(mask), "k", {a});
    ASSERT_FALSE(r) << mask;
    EXPECT_EQ(r.error().code, "err_tensor_access_out_of_bound") << r.error().format();
    EXPECT_EQ(r.error().loc.line, 14) << r.error().format();
  }
}

}  // namespace

}  // namespace nki_agent
