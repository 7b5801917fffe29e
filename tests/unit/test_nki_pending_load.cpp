// `t[key] = nl.load(...)`: the compiler folds the assignment's copy into the load, so the DMA writes
// t[key] itself and DMA destinations have no start-partition rule (_nkia.operands.PendingLoad). The
// trace then holds one DMA into the slice and no tensor_copy, in both dialects, for
// nl.load_transpose2d and for the legacy nisa.dma_transpose too, at partitions a compute engine
// could not start at (3, 16, 100); the values land where they should. Every other use of a load is
// unchanged: bound to a name first, nested in an expression, stored into a Python list, or with a
// dtype= of its own that differs from the destination's (the copy converts a second time) it is
// still a new tile plus a copy, so a compute-engine copy at an unaligned start is still refused.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/hardware.h"
#include "cost/lower.h"
#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

constexpr const char* kLegacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    band = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    band[3:128, :] = nl.load(x[0:125, :])
    nl.store(out[3:128, :], value=band[3:128, :])
    return out
)py";

constexpr const char* kCurrent = R"py(
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    band = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    band[3:128, :] = nl.load(x[0:125, :])
    nisa.dma_copy(dst=out[3:128, :], src=band[3:128, :])
    return out
)py";

// Partition 16 (16 rows, converted to bfloat16 by the DMA), a masked load at 100 (only 20 of its
// 28 rows), a transposed load at 100 of a second tile.
constexpr const char* kVariants = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    half = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    tail = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    tr = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.zeros((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
    a[16:32, :] = nl.load(x[0:16, :])
    b = nl.zeros((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    ip = nl.arange(28)[:, None]
    jf = nl.arange(64)[None, :]
    b[100:128, :] = nl.load(x[ip, jf], mask=(ip < 20))
    c = nl.zeros((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    c[100:116, :] = nl.load_transpose2d(x[0:64, 0:16])
    nl.store(half, value=a)
    nl.store(tail, value=b)
    nl.store(tr, value=c)
    return half, tail, tr
)py";

class PendingLoad : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Tensor input() {
    std::vector<float> v(128 * 64);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 251) * 0.25f - 31.0f;  // exact in bf16
    return Tensor::from_f32({128, 64}, v);
  }
  static Result<KernelOutcome> run(const char* src) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "k";
    c.inputs = {input()};
    return python_run(c);
  }
  static std::vector<std::string> ops(const Trace& t) {
    std::vector<std::string> v;
    for (const auto& r : t.records()) v.push_back(r.opcode_text());
    return v;
  }
};

TEST_F(PendingLoad, AssignedLoadIsOneDmaIntoTheSliceInBothDialects) {
  for (const auto& [src, line] : {std::pair{kLegacy, 9}, std::pair{kCurrent, 10}}) {
    auto r = run(src);
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(ops(r->trace), (std::vector<std::string>{"dma_copy", "dma_copy"})) << r->trace.to_json().dump();
    const InstructionRecord& load = r->trace.records()[0];
    EXPECT_EQ(load.engine, Engine::kDma);
    EXPECT_EQ(load.loc.line, line);  // the load's statement
    ASSERT_EQ(load.operands.size(), 2u);
    EXPECT_TRUE(load.operands[0].is_write);
    EXPECT_EQ(load.operands[0].buffer, Buffer::kSbuf);
    EXPECT_EQ(load.operands[0].start_partition, 3);
    EXPECT_EQ(load.operands[0].partitions, 125);
    // Rows 3.. of the output are rows 0.. of x.
    const std::vector<float> x = input().to_f32_vector(), got = r->outputs[0].to_f32_vector();
    for (size_t i = 0; i < 125 * 64; i += 37) EXPECT_EQ(got[3 * 64 + i], x[i]) << i;
    // The cost model sees the one DMA: no copy to fold.
    auto hw = hardware_for_target("trn1");
    ASSERT_TRUE(hw) << hw.error().format();
    auto prog = lower_trace(r->trace, *hw);
    ASSERT_TRUE(prog) << prog.error().format();
    EXPECT_EQ(prog->folded_copies, 0);
    EXPECT_EQ(prog->ops.size(), 2u);
  }
}

TEST_F(PendingLoad, ConvertingMaskedAndTransposedLoadsLandInTheirSlices) {
  auto r = run(kVariants);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(ops(r->trace), (std::vector<std::string>{"memset", "dma_copy", "memset", "dma_copy", "memset", "dma_copy",
                                                     "dma_copy", "dma_copy", "dma_copy"}))
      << r->trace.to_json().dump();
  const auto& recs = r->trace.records();
  EXPECT_EQ(recs[1].operands[0].start_partition, 16);
  EXPECT_EQ(recs[1].operands[0].dtype, DType::kBFloat16);
  EXPECT_EQ(recs[3].operands[0].start_partition, 100);
  EXPECT_EQ(recs[3].operands[0].partitions, 20);  // the mask's box
  EXPECT_EQ(recs[5].operands[0].start_partition, 100);
  const std::vector<float> x = input().to_f32_vector();
  ASSERT_EQ(r->outputs.size(), 3u);
  const std::vector<float> half = r->outputs[0].to_f32_vector(), tail = r->outputs[1].to_f32_vector(),
                           tr = r->outputs[2].to_f32_vector();
  for (int p = 0; p < 128; ++p)
    for (int f = 0; f < 64; ++f) {
      const size_t i = static_cast<size_t>(p * 64 + f);
      EXPECT_EQ(half[i], p >= 16 && p < 32 ? x[static_cast<size_t>((p - 16) * 64 + f)] : 0.0f) << p << "," << f;
      EXPECT_EQ(tail[i], p >= 100 && p < 120 ? x[static_cast<size_t>((p - 100) * 64 + f)] : 0.0f) << p << "," << f;
      // c[100 + j, i] = x[i, j] for i < 64, j < 16.
      EXPECT_EQ(tr[i], p >= 100 && p < 116 ? x[static_cast<size_t>(f * 64 + (p - 100))] : 0.0f) << p << "," << f;
    }
}

// Legacy nisa.dma_transpose returns its tile; assigned into a slice, the DMA writes the slice.
TEST_F(PendingLoad, LegacyDmaTransposeLandsInTheSlice) {
  auto r = run(R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    out = nl.ndarray((16, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    band = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    band[100:116, :] = nisa.dma_transpose(x[0:64, 0:16])
    nl.store(out, value=band[100:116, :])
    return out
)py");
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(ops(r->trace), (std::vector<std::string>{"dma_transpose", "dma_copy"})) << r->trace.to_json().dump();
  EXPECT_EQ(r->trace.records()[0].operands[0].start_partition, 100);
  const std::vector<float> x = input().to_f32_vector(), got = r->outputs[0].to_f32_vector();
  for (size_t j = 0; j < 16; ++j)
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(got[j * 64 + i], x[i * 64 + j]) << j << "," << i;
}

// The other uses of a load are what they were: a new tile, then (when assigned) a copy.
TEST_F(PendingLoad, OtherUsesStillLoadIntoANewTile) {
  auto nested = run(R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    band = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    band[0:128, :] = nl.exp(nl.load(x))
    tiles = [None]
    tiles[0] = nl.load(x)
    named = nl.load(x)
    band[0:64, :] = named[0:64, :]
    wide = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    wide[0:32, :] = nl.load(x[0:32, :], dtype=nl.bfloat16)
    nl.store(out, value=nl.add(band, tiles[0]))
    return out
)py");
  ASSERT_TRUE(nested) << nested.error().format();
  EXPECT_EQ(ops(nested->trace),
            (std::vector<std::string>{"dma_copy", "activation:exp", "tensor_copy", "dma_copy", "dma_copy",
                                      "tensor_copy", "dma_copy", "tensor_copy", "tensor_tensor:add", "dma_copy"}))
      << nested->trace.to_json().dump();

  // Bound to a name first: the copy at partition 3 is a compute-engine copy, refused as before.
  auto named = run(R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    band = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    t = nl.load(x[0:125, :])
    band[3:128, :] = t
    nl.store(out, value=band)
    return out
)py");
  ASSERT_FALSE(named);
  EXPECT_EQ(named.error().code, "nkia_partition_start_alignment");
  EXPECT_EQ(named.error().loc.line, 10);
}

}  // namespace
}  // namespace nki_agent
