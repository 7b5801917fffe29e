// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// Unwritten memory (nki/written.h): reading a tile that nothing wrote, garbage that an instruction
// mixes into real results and that reaches an output, and outputs left partly unwritten are
// warnings at the right line — in computing and timing-only runs alike — while the ragged-tile
// pattern of correct kernels (a masked load, unmasked compute, a masked store; rows past the end
// reduced into garbage that is never stored) raises none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

class NkiWritten : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Tensor values(const Shape& s) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 37) - 18) * 0.125f;
    return Tensor::from_f32(s, v);
  }
  // The warnings of a run of `entry` on `inputs`, computing and timing-only: both must agree.
  static std::vector<Diagnostic> warnings(const std::string& src, const char* entry, std::vector<Tensor> inputs) {
    std::vector<Diagnostic> first;
    for (bool compute : {true, false}) {
      KernelCall c;
      c.src = kernel_files_from_source(src);
      c.entry = entry;
      c.inputs = inputs;
      c.compute = compute;
      auto r = python_run(c);
      EXPECT_TRUE(r) << r.error().format();
      if (!r) return {};
      if (compute) {
        first = r->warnings;
        continue;
      }
      EXPECT_EQ(r->warnings.size(), first.size()) << "timing-only run";
      for (size_t i = 0; i < first.size() && i < r->warnings.size(); ++i) {
        EXPECT_EQ(r->warnings[i].code, first[i].code);
        EXPECT_EQ(r->warnings[i].loc.line, first[i].loc.line);
      }
    }
    return first;
  }
  static std::string codes(const std::vector<Diagnostic>& ws) {
    std::string s;
    for (const Diagnostic& w : ws) s += w.format() + "\n";
    return s;
  }
};

// Legacy dialect, 200 x 300 in 128 x 256 tiles: masked loads, unmasked compute, masked stores.
constexpr const char* kRagged = R"py(
import math
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    row_max = nl.ndarray((rows, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    jf = nl.arange(256)[None, :]
    for r in nl.affine_range(math.ceil(rows / 128)):
        i = r * 128 + ip
        full = nl.load(x[i, nl.arange(cols)[None, :]], mask=(i < rows))
        m = nl.max(full, axis=1, keepdims=True)
        nl.store(row_max[i, nl.arange(1)[None, :]], value=m, mask=(i < rows))
        for c in nl.affine_range(math.ceil(cols / 256)):
            j = c * 256 + jf
            t = nl.load(x[i, j], mask=(i < rows) & (j < cols))
            y = nl.multiply(nl.exp(t), 2.0)
            z = nl.copy(nl.transpose(y[:, 0:128]))
            nl.store(out[i, j], value=y, mask=(i < rows) & (j < cols))
    return out, row_max
)py";

TEST_F(NkiWritten, RaggedTilesComputedWholeAndStoredMaskedRaiseNothing) {
  const auto ws = warnings(kRagged, "k", {values({200, 300})});
  EXPECT_TRUE(ws.empty()) << codes(ws);
}

// Current dialect: a PSUM accumulator over partial K tiles where rows past the end are zeroed with
// affine_select (column sums of a ragged [rows, cols] input, as a ones-vector matmul).
constexpr const char* kColumnSums = R"py(
import math
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    rows, cols = x.shape
    out = nl.ndarray((1, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    ones = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    acc = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.psum)
    for t in nl.sequential_range(math.ceil(rows / 128)):
        n = min(128, rows - t * 128)
        tile = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile[0:n, 0:cols], src=x[t * 128:t * 128 + n, :])
        clean = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.affine_select(dst=clean, pattern=[[0, 512]], offset=n - 1, channel_multiplier=-1,
                           on_true_tile=tile, on_false_value=0.0, cmp_op=nl.greater_equal)
        nisa.nc_matmul(dst=acc, stationary=ones, moving=clean)
    res = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res[:, 0:cols])
    return out
)py";

TEST_F(NkiWritten, GarbageRowsZeroedBeforeAMatmulAndGarbageColumnsNotStoredRaiseNothing) {
  const auto ws = warnings(kColumnSums, "k", {values({300, 200})});
  EXPECT_TRUE(ws.empty()) << codes(ws);
}

// An accumulator read before anything was written (line 11).
constexpr const char* kNeverWritten = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    n, P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.sequential_range(n):
        acc[...] = nl.add(acc, nl.load(x[i]))
    nl.store(out, value=acc)
    return out
)py";

TEST_F(NkiWritten, ReadingATileNothingWroteIsAWarningAtTheRead) {
  const auto ws = warnings(kNeverWritten, "k", {values({3, 128, 64})});
  ASSERT_GE(ws.size(), 1u) << codes(ws);
  EXPECT_EQ(ws[0].code, "nkia_uninitialized_read");
  EXPECT_EQ(ws[0].severity, Severity::kWarning);
  EXPECT_EQ(ws[0].loc.line, 11);
  EXPECT_NE(ws[0].message.find("nothing has written yet"), std::string::npos) << ws[0].message;
  EXPECT_FALSE(ws[0].hint.empty());
}

// A row mean over a tile whose last 44 columns were never loaded: the garbage reaches every stored
// mean. The warning names the reduction (line 12), not the store.
constexpr const char* kMeanOverGarbage = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    out = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    jf = nl.arange(256)[None, :]
    ip = nl.arange(P)[:, None]
    t = nl.load(x[ip, jf], mask=(jf < F))
    m = nl.mean(t, axis=1, keepdims=True)
    scaled = nl.multiply(m, 0.5)
    nl.store(out, value=scaled)
    return out
)py";

TEST_F(NkiWritten, GarbageMixedIntoResultsThatReachAnOutputIsAWarningWhereItWasMixed) {
  const auto ws = warnings(kMeanOverGarbage, "k", {values({128, 212})});
  ASSERT_EQ(ws.size(), 1u) << codes(ws);
  EXPECT_EQ(ws[0].code, "nkia_uninitialized_read");
  EXPECT_EQ(ws[0].loc.line, 12);
  EXPECT_NE(ws[0].message.find("combined unwritten elements"), std::string::npos) << ws[0].message;
  EXPECT_NE(ws[0].message.find("reached the returned output"), std::string::npos) << ws[0].message;
}

// A matmul contracting over 128 partitions of which only 100 were loaded (line 16).
constexpr const char* kPartialContraction = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a, b):
    K, M = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((128, M), dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=s[0:K, :], src=a)
    nisa.dma_copy(dst=m[0:K, :], src=b)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=s, moving=m)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
)py";

TEST_F(NkiWritten, AMatmulOverUnloadedPartitionsIsAWarningAtTheMatmul) {
  const auto ws = warnings(kPartialContraction, "k", {values({100, 64}), values({100, 96})});
  ASSERT_EQ(ws.size(), 1u) << codes(ws);
  EXPECT_EQ(ws[0].code, "nkia_uninitialized_read");
  EXPECT_EQ(ws[0].loc.line, 16);
  EXPECT_NE(ws[0].message.find("'nc_matmul'"), std::string::npos) << ws[0].message;
}

// Half of the output stored (the return is line 11).
constexpr const char* kHalfStored = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    rows, F = x.shape
    out = nl.ndarray((rows, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, :])
    nl.store(out[0:128, :], value=nl.exp(t))
    return out
)py";

TEST_F(NkiWritten, AnOutputLeftPartlyUnwrittenIsAWarningAtTheReturn) {
  const auto ws = warnings(kHalfStored, "k", {values({256, 64})});
  ASSERT_EQ(ws.size(), 1u) << codes(ws);
  EXPECT_EQ(ws[0].code, "nkia_output_partially_written");
  EXPECT_EQ(ws[0].loc.line, 11);
  EXPECT_NE(ws[0].message.find("[128, 0]"), std::string::npos) << ws[0].message;
}

// Scans: a running sum over a tile whose tail was never loaded is fine when the tail is not stored;
// one whose head is unwritten carries garbage into every stored element (line 22).
constexpr const char* kScans = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def tail_missing(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, 512), dtype=nl.float32, buffer=nl.sbuf)
    t[:, 0:F] = nl.load(x)
    s = nisa.tensor_tensor_scan(t, t, 0.0, nl.multiply, nl.add)
    nl.store(out, value=s[:, 0:F])
    return out

@nki.jit
def head_missing(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, 512), dtype=nl.float32, buffer=nl.sbuf)
    t[:, 512 - F:512] = nl.load(x)
    s = nisa.tensor_tensor_scan(t, t, 0.0, nl.multiply, nl.add)
    nl.store(out, value=s[:, 512 - F:512])
    return out
)py";

TEST_F(NkiWritten, AScanCarriesGarbageForwardOnly) {
  const auto tail = warnings(kScans, "tail_missing", {values({128, 300})});
  EXPECT_TRUE(tail.empty()) << codes(tail);
  const auto ws = warnings(kScans, "head_missing", {values({128, 300})});
  ASSERT_EQ(ws.size(), 1u) << codes(ws);
  EXPECT_EQ(ws[0].code, "nkia_uninitialized_read");
  EXPECT_EQ(ws[0].loc.line, 22);
}

// `t[...] = expr(mask=cond)` (an nl call or a legacy nisa one) with a condition false for the whole
// tile writes nothing: t keeps the
// values it had (as when the compiler makes t the instruction's destination), and nothing unwritten
// is read.
constexpr const char* kEmptyMask = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = nl.load(x)
    for i in nl.affine_range(2):
        t[...] = nl.multiply(nl.load(x), 3.0, mask=(i * 128 < 100))
        t[...] = nisa.tensor_scalar(t, nl.multiply, 1.0, mask=(i * 128 < 100))
    nl.store(out, value=t)
    return out
)py";

TEST_F(NkiWritten, AnAssignmentUnderAnEmptyMaskWritesNothing) {
  const Tensor x = values({128, 64});
  KernelCall c;
  c.src = kernel_files_from_source(kEmptyMask);
  c.entry = "k";
  c.inputs = {x};
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_TRUE(r->warnings.empty()) << codes(r->warnings);
  const auto got = r->outputs.at(0).to_f32_vector(), in = x.to_f32_vector();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], 3.0f * in[i]) << i;
}

// The double-row FP8 matmul (trn2) follows unwritten data as the ordinary one does: a stationary
// tile loaded for its first 64 columns gives 64 result rows that hold data. Storing those raises
// nothing; storing all 128 rows is a warning.
constexpr const char* kDoubleRowHalf = R"py(
import nki
import nki.isa as nisa
import nki.language as nl


def product(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    a = nl.ndarray((128, 2, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((128, 2, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a[:, :, 0:64], src=lhsT[:, 0:64])
    nisa.dma_copy(dst=b, src=rhs.reshape((128, 2, N)))
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b, perf_mode=nisa.matmul_perf_mode.double_row)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    return res


@nki.jit
def k_half(lhsT, rhs):
    res = product(lhsT, rhs)
    out = nl.ndarray((64, rhs.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res[0:64, :])
    return out


@nki.jit
def k_all(lhsT, rhs):
    res = product(lhsT, rhs)
    out = nl.ndarray(res.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out
)py";

TEST_F(NkiWritten, ADoubleRowMatmulFollowsUnwrittenColumnsOfItsOperands) {
  const Tensor lhsT = values({256, 128}).astype(DType::kFloat8E4M3), rhs = values({256, 64}).astype(DType::kFloat8E4M3);
  for (const char* entry : {"k_half", "k_all"}) {
    KernelCall c;
    c.src = kernel_files_from_source(kDoubleRowHalf);
    c.entry = entry;
    c.inputs = {lhsT, rhs};
    c.target = "trn2";
    auto r = python_run(c);
    ASSERT_TRUE(r) << r.error().format();
    if (std::string(entry) == "k_half")
      EXPECT_TRUE(r->warnings.empty()) << codes(r->warnings);
    else
      EXPECT_FALSE(r->warnings.empty()) << entry;
  }
}

}  // namespace
}  // namespace nki_agent
