// The two logical cores of an LNC=2 launch (a launch of two instances, kernel[2]): nisa.sendrecv
// exchanges tiles between them, nisa.core_barrier orders their HBM writes and reads, a core that
// waits for a partner that never comes is a deadlock (nkia_multicore_deadlock), and a launch without
// a partner core refuses both (nkia_multicore_not_modelled). Each test runs a small kernel through
// the kernel host and checks what both cores computed together.
#include <gtest/gtest.h>

#include <string>

#include "runtime/python/py_host.h"
#include "tensor/ops.h"

namespace nki_agent {
namespace {

class NkiMulticore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& src, const std::string& entry, std::vector<Tensor> inputs,
                                   std::vector<int64_t> grid, std::string target = "trn2") {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    c.grid = std::move(grid);
    c.target = std::move(target);
    return python_run(c);
  }
  static Tensor ramp(const Shape& s) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) - 40.0f;
    return Tensor::from_f32(s, v);
  }
};

constexpr const char* kHead = R"py(
import nki
import nki.isa as nisa
import nki.language as nl
)py";

// Each core loads its own half of the rows, sends it to its peer and stores the peer's half in its
// own place: the output is the input with its two halves swapped. Run as one instance after the
// other, core 0 would wait for a tile core 1 has not sent yet.
TEST_F(NkiMulticore, SendrecvSwapsTilesBetweenTheTwoCores) {
  const std::string src = std::string(kHead) + R"py(
@nki.jit
def swap(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    mine = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    theirs = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=a[c * 128:(c + 1) * 128, :])
    nisa.sendrecv(src=mine, dst=theirs, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)
    nisa.dma_copy(dst=out[c * 128:(c + 1) * 128, :], src=theirs)
    return out
)py";
  const Tensor a = ramp({256, 64});
  auto r = run(src, "swap", {a}, {2});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 1u);
  const auto got = r->outputs[0].to_f32_vector();
  const auto in = a.to_f32_vector();
  for (int64_t row = 0; row < 256; ++row)
    for (int64_t col = 0; col < 64; ++col) {
      const int64_t from = (row + 128) % 256;
      ASSERT_EQ(got[static_cast<size_t>(row * 64 + col)], in[static_cast<size_t>(from * 64 + col)])
          << "row " << row << " col " << col;
    }
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
}

// Each physical core has its own SBUF: both cores place their tiles at the same addresses and keep
// them live across the exchange, which on one SBUF would be an overlap (nkia_allocation_overlap).
TEST_F(NkiMulticore, EachCorePlacesTilesInItsOwnSbuf) {
  const std::string src = std::string(kHead) + R"py(
@nki.jit
def placed(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf, address=(0, 0))
    u = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf, address=(0, 256))
    nisa.dma_copy(dst=t, src=a[c * 128:(c + 1) * 128, :])
    nisa.sendrecv(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)
    nisa.tensor_tensor(dst=t, data1=t, data2=u, op=nl.add)
    nisa.dma_copy(dst=out[c * 128:(c + 1) * 128, :], src=t)
    return out
)py";
  const Tensor a = ramp({256, 64});
  auto r = run(src, "placed", {a}, {2});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  const auto in = a.to_f32_vector();
  for (size_t i = 0; i < 128 * 64; ++i) {
    ASSERT_EQ(got[i], in[i] + in[i + 128 * 64]) << i;
    ASSERT_EQ(got[i + 128 * 64], in[i] + in[i + 128 * 64]) << i;
  }
}

// Core 1 publishes the input through a shared HBM scratch tensor; core 0 reads it after the barrier
// and stores twice its value. Without the barrier core 0 (which runs first) would read memory nothing
// had written yet.
TEST_F(NkiMulticore, CoreBarrierOrdersOneCoresWritesBeforeTheOthersReads) {
  const std::string body = R"py(
@nki.jit
def publish(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    scratch = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    if c == 1:
        nisa.dma_copy(dst=t, src=a)
        nisa.dma_copy(dst=scratch, src=t)
    BARRIER
    if c == 0:
        nisa.dma_copy(dst=t, src=scratch)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out, src=t)
    return out
)py";
  auto with = [&](const std::string& barrier) {
    std::string s = std::string(kHead) + body;
    s.replace(s.find("BARRIER"), 7, barrier);
    return s;
  };
  const Tensor a = ramp({128, 32});
  auto r = run(with("nisa.core_barrier(scratch, cores=(0, 1))"), "publish", {a}, {2});
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  const auto in = a.to_f32_vector();
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(got[i], 2.0f * in[i]) << i;
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();

  // The same kernel without the barrier: core 0 reads the scratch before core 1 has written it.
  auto unsynced = run(with("pass"), "publish", {a}, {2});
  ASSERT_TRUE(unsynced) << unsynced.error().format();
  ASSERT_FALSE(unsynced->warnings.empty());
  const std::string code = unsynced->warnings.front().code;
  EXPECT_TRUE(code == "nkia_uninitialized_read" || code == "nkia_output_partially_written")
      << unsynced->warnings.front().format();
}

// A synchronisation only one core reaches never completes on a device: the waiting call reports
// the deadlock at its line. Two cores waiting on different pipes are a deadlock too.
TEST_F(NkiMulticore, ASynchronisationOnlyOneCoreReachesIsADeadlock) {
  const struct {
    const char* body;
    int line;
  } kCases[] = {
      {"    if nl.program_id(0) == 0:\n"
       "        nisa.core_barrier(out, cores=(0, 1))\n",
       13},
      {"    c = nl.program_id(0)\n"
       "    nisa.sendrecv(src=t, dst=u, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=c)\n",
       13},
  };
  for (const auto& k : kCases) {
    const std::string src = std::string(kHead) + R"py(
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
)py" + k.body + "    nisa.dma_copy(dst=out, src=t)\n    return out\n";
    auto r = run(src, "k", {ramp({128, 8})}, {2});
    ASSERT_FALSE(r) << k.body;
    EXPECT_EQ(r.error().code, "nkia_multicore_deadlock") << r.error().format();
    EXPECT_EQ(r.error().loc.line, k.line) << r.error().format();
  }
}

// When one core fails while the other waits for it, the launch reports that failure, not a deadlock.
TEST_F(NkiMulticore, AFailingCoreIsReportedAsItselfNotAsItsPeersWait) {
  const std::string src = std::string(kHead) + R"py(
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    if nl.program_id(0) == 1:
        raise ValueError("core 1 gives up")
    nisa.core_barrier(out, cores=(0, 1))
    return out
)py";
  auto r = run(src, "k", {ramp({128, 8})}, {2});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("core 1 gives up"), std::string::npos) << r.error().format();
  EXPECT_EQ(r.error().loc.line, 10) << r.error().format();
}

// Without a partner core, a send to core 1 or a barrier of both cores is refused by name; a barrier
// of core 0 alone (nki-library's LNC=1 path: core_barrier(t, (0))) and a sendrecv to itself are
// legal and leave the data as they are; both need NeuronCore-v3 (trn2) or later.
TEST_F(NkiMulticore, OneCoreLaunchesRefuseAPartnerAndAcceptThemselves) {
  const std::string head = std::string(kHead) + R"py(
@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
)py";
  const std::string tail = "    nisa.dma_copy(dst=out, src=u)\n    return out\n";
  for (const char* call :
       {"nisa.sendrecv(src=t, dst=u, send_to_rank=1, recv_from_rank=1, pipe_id=0)", "nisa.core_barrier(out, (0, 1))"}) {
    auto r = run(head + "    " + call + "\n" + tail, "k", {ramp({128, 8})}, {});
    ASSERT_FALSE(r) << call;
    EXPECT_EQ(r.error().code, "nkia_multicore_not_modelled") << r.error().format();
    EXPECT_EQ(r.error().loc.line, 12) << r.error().format();
  }
  const std::string self = head +
                           "    nisa.core_barrier(out, (0))\n"
                           "    nisa.sendrecv(src=t, dst=u, send_to_rank=0, recv_from_rank=0, pipe_id=0)\n" +
                           tail;
  const Tensor a = ramp({128, 8});
  auto r = run(self, "k", {a}, {});
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->outputs[0].to_f32_vector(), a.to_f32_vector());

  auto old = run(self, "k", {a}, {}, "trn1");
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code, "nkia_feature_not_on_target") << old.error().format();
}

// A grid of two with no synchronisation runs as two instances one after the other, as before.
TEST_F(NkiMulticore, TwoInstancesWithoutSynchronisationRunAsBefore) {
  const std::string src = std::string(kHead) + R"py(
@nki.jit
def halves(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = nl.program_id(0)
    t = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[:, c * 16:(c + 1) * 16])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out[:, c * 16:(c + 1) * 16], src=t)
    return out
)py";
  const Tensor a = ramp({128, 32});
  auto r = run(src, "halves", {a}, {2}, "trn1");
  ASSERT_TRUE(r) << r.error().format();
  const auto got = r->outputs[0].to_f32_vector();
  const auto in = a.to_f32_vector();
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(got[i], in[i] + 1.0f) << i;
}

}  // namespace
}  // namespace nki_agent
