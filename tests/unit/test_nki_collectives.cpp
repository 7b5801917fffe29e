// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// nki.collectives between the ranks of a replica group: a launch runs every rank its collectives
// name, each on its own copy of the arguments, and returns rank 0's outputs. Each kernel makes its
// ranks' data differ through nki.collectives.rank_id() (a scalar_offset into a table of every rank's
// values), so the tests see which rank's values arrived where. Also: the ring permutes and the rank a
// ring step processes, LNC=2 ranks, the profile (rank 0's instructions only), the refusals, and the
// rules on replica groups and operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runtime/python/py_host.h"
#include "tensor/ops.h"

namespace nki_agent {
namespace {

class NkiCollectives : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Result<KernelOutcome> run(const std::string& body, const std::string& entry, std::vector<Tensor> inputs,
                                   std::vector<int64_t> grid = {}, bool compute = true) {
    KernelCall c;
    c.src = kernel_files_from_source(std::string(kHead) + body);
    c.entry = entry;
    c.inputs = std::move(inputs);
    c.grid = std::move(grid);
    c.target = "trn2";
    c.compute = compute;
    return python_run(c);
  }
  // [ranks, rows, cols]: rank r's values are 1000 r + its element index, all distinct.
  static Tensor table(int64_t ranks, int64_t rows, int64_t cols) {
    std::vector<float> v(static_cast<size_t>(ranks * rows * cols));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(1000 * (static_cast<int64_t>(i) / (rows * cols)) +
                                static_cast<int64_t>(i) % (rows * cols));
    return Tensor::from_f32({ranks, rows, cols}, v);
  }
  static float at(const Tensor& t, int64_t rank, int64_t row, int64_t col) {
    const int64_t rows = t.shape()[1], cols = t.shape()[2];
    return t.to_f32_vector()[static_cast<size_t>((rank * rows + row) * cols + col)];
  }

  static constexpr const char* kHead = R"py(
import nki
import nki.isa as nisa
import nki.language as nl
import nki.collectives as ncc
from nki.collectives import ReplicaGroup


def mine(table):
    """This rank's [rows, cols] of table [ranks, rows, cols], in a shared_hbm tensor of its own."""
    _, H, W = table.shape
    t = nl.ndarray((H, W), dtype=table.dtype, buffer=nl.shared_hbm, name="mine")
    nisa.dma_copy(dst=t, src=table.ap(pattern=[[W, H], [1, W]], scalar_offset=ncc.rank_id(), indirect_dim=0))
    return t


def out_of(t):
    o = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=t)
    return o
)py";
};

TEST_F(NkiCollectives, AllReduceSumsEveryRanksValues) {
  auto r = run(R"py(
@nki.jit
def k(table, op):
    src = mine(table)
    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm, name="dst")
    ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[0, 1, 2]]), op=op)
    return out_of(dst)

def add(table):
    return k(table, nl.add)

def maximum(table):
    return k(table, nl.maximum)
)py",
               "add", {table(3, 4, 8)});
  ASSERT_TRUE(r) << r.error().format();
  const Tensor t = table(3, 4, 8);
  const auto got = r->outputs[0].to_f32_vector();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j)
      ASSERT_EQ(got[static_cast<size_t>(i * 8 + j)], at(t, 0, i, j) + at(t, 1, i, j) + at(t, 2, i, j));
}

// Rank 0 gathers every rank's slice in the group's order; reduce_scatter leaves rank 0 the reduced
// first part; all_to_all gives it the first part of every rank's slice.
TEST_F(NkiCollectives, GatherScatterAndAllToAllPlaceEachRanksPart) {
  auto r = run(R"py(
@nki.jit
def k(table):
    src = mine(table)
    H, W = src.shape
    rg = ReplicaGroup([[0, 1]])
    g = nl.ndarray((2 * H, W), dtype=src.dtype, buffer=nl.shared_hbm, name="g")
    ncc.all_gather(srcs=[src], dsts=[g], replica_group=rg, collective_dim=0)
    rs = nl.ndarray((H // 2, W), dtype=src.dtype, buffer=nl.shared_hbm, name="rs")
    ncc.reduce_scatter(srcs=[src], dsts=[rs], replica_group=rg, collective_dim=0, op=nl.maximum)
    a2a = nl.ndarray((H, W), dtype=src.dtype, buffer=nl.shared_hbm, name="a2a")
    ncc.all_to_all(srcs=[src], dsts=[a2a], replica_group=rg, collective_dim=0)
    return out_of(g), out_of(rs), out_of(a2a)
)py",
               "k", {table(2, 4, 8)});
  ASSERT_TRUE(r) << r.error().format();
  ASSERT_EQ(r->outputs.size(), 3u);
  const Tensor t = table(2, 4, 8);
  const auto g = r->outputs[0].to_f32_vector(), rs = r->outputs[1].to_f32_vector(), a2a = r->outputs[2].to_f32_vector();
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t j = 0; j < 8; ++j) ASSERT_EQ(g[static_cast<size_t>(row * 8 + j)], at(t, row / 4, row % 4, j));
  for (int64_t row = 0; row < 2; ++row)
    for (int64_t j = 0; j < 8; ++j)
      ASSERT_EQ(rs[static_cast<size_t>(row * 8 + j)], std::max(at(t, 0, row, j), at(t, 1, row, j)));
  for (int64_t row = 0; row < 4; ++row)  // part k of rank 0's result: rank k's part 0
    for (int64_t j = 0; j < 8; ++j) ASSERT_EQ(a2a[static_cast<size_t>(row * 8 + j)], at(t, row / 2, row % 2, j));
}

// Four ranks, each core of LNC=2 its own half: a ring of collective_permute_implicit steps passes
// every rank's block around, and the rank a step processes tells where it goes. Every rank ends with
// all blocks in rank order.
TEST_F(NkiCollectives, RingPermuteWithLnc2GathersEveryRankInOrder) {
  auto r = run(R"py(
@nki.jit
def ring(table):
    # table [ranks, 2 * 64, 32]: core c of rank r sends rows [64 c, 64 c + 64) of table[r]
    n = 4
    rg = ReplicaGroup([list(range(n))])
    c = nl.program_id(0)
    _, H2, W = table.shape
    H = H2 // 2
    out = nl.ndarray((n, H2, W), dtype=table.dtype, buffer=nl.shared_hbm)
    bufs = [nl.ndarray((H, W), dtype=table.dtype, buffer=nl.sbuf) for _ in range(2)]
    nisa.dma_copy(dst=bufs[0], src=table.ap(pattern=[[W, H], [1, W]], offset=c * H * W, scalar_offset=ncc.rank_id(),
                                            indirect_dim=0))
    for it in range(n):
        who = ncc.collective_permute_implicit_current_processing_rank_id(iteration_id=it, replica_group=rg)
        nisa.dma_copy(dst=out.ap(pattern=[[W, H], [1, W]], offset=c * H * W, scalar_offset=who, indirect_dim=0),
                      src=bufs[it % 2])
        if it + 1 < n:
            ncc.collective_permute_implicit(srcs_by_channel=[[bufs[it % 2]]], dsts_by_channel=[[bufs[(it + 1) % 2]]],
                                            replica_group=rg)
    return out
)py",
               "ring", {table(4, 128, 32)}, {2});
  ASSERT_TRUE(r) << r.error().format();
  const Tensor t = table(4, 128, 32);
  const auto got = r->outputs[0].to_f32_vector(), want = t.to_f32_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front().format();
}

// collective_permute with explicit pairs (a swap of ranks 0 and 1) and the implicit ring's reducing
// form: rank 0 receives its predecessor's (rank 1's) a + b.
TEST_F(NkiCollectives, PermutesReceiveFromTheirSource) {
  auto r = run(R"py(
@nki.jit
def k(table):
    src = mine(table)
    sw = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm, name="sw")
    ncc.collective_permute(srcs=[src], dsts=[sw], source_target_pairs=[(0, 1), (1, 0)])
    red = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm, name="red")
    ncc.collective_permute_implicit_reduce(srcs0_by_channel=[[src]], srcs1_by_channel=[[sw]],
                                           dsts_by_channel=[[red]], replica_group=ReplicaGroup([[0, 1]]), op=nl.add)
    return out_of(sw), out_of(red)
)py",
               "k", {table(2, 4, 8)});
  ASSERT_TRUE(r) << r.error().format();
  const Tensor t = table(2, 4, 8);
  const auto sw = r->outputs[0].to_f32_vector(), red = r->outputs[1].to_f32_vector();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      ASSERT_EQ(sw[static_cast<size_t>(i * 8 + j)], at(t, 1, i, j));
      ASSERT_EQ(red[static_cast<size_t>(i * 8 + j)], at(t, 1, i, j) + at(t, 0, i, j));
    }
}

// The profile is one rank's: a two-rank all_gather kernel traces rank 0's instructions (its load,
// the two parts it receives, its store), not both ranks'; and a timing-only run traces the same.
TEST_F(NkiCollectives, TheTraceIsRankZerosAlone) {
  const std::string body = R"py(
@nki.jit
def k(table):
    src = mine(table)
    H, W = src.shape
    g = nl.ndarray((2 * H, W), dtype=src.dtype, buffer=nl.shared_hbm, name="g")
    ncc.all_gather(srcs=[src], dsts=[g], replica_group=ReplicaGroup([[0, 1]]), collective_dim=0)
    return out_of(g)
)py";
  for (const bool compute : {true, false}) {
    auto r = run(body, "k", {table(2, 4, 8)}, {}, compute);
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_EQ(r->trace.size(), 4u) << "compute " << compute;
  }
}

// Rank numbers are registers the device sets: usable as a scalar_offset, not in Python control flow.
TEST_F(NkiCollectives, RankIdIsNotAPythonInteger) {
  auto r = run(R"py(
@nki.jit
def k(a):
    for _ in range(ncc.rank_id()):
        pass
    return out_of(a)
)py",
               "k", {table(1, 4, 8)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "err_dynamic_control_flow_not_supported") << r.error().format();
}

TEST_F(NkiCollectives, BadGroupsAndOperandsAreRefused) {
  const struct {
    const char* call;
    const char* code;
  } kCases[] = {
      // rank 0 runs the kernel but is in no group: the launch grows to ranks 0..2
      {"ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[1, 2]]), op=nl.add)", "nkia_bad_operand"},
      {"ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[0, 1], [1, 2]]), op=nl.add)",
       "nkia_bad_operand"},
      {"ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[0, 1]]), op=nl.multiply)",
       "nkia_unsupported_operator"},
      {"ncc.all_gather(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[0, 1]]), collective_dim=0)",
       "err_store_dst_shape_smaller_than_other_shape"},
      {"ncc.all_reduce(srcs=[src], dsts=[tile], replica_group=ReplicaGroup([[0, 1]]), op=nl.add)", "nkia_bad_operand"},
      {"ncc.all_gather_v(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[0, 1]]), metadata_tensor=src)",
       "nkia_multicore_not_modelled"},
      {"ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([list(range(65))]), op=nl.add)",
       "nkia_multicore_not_modelled"},
  };
  for (const auto& c : kCases) {
    const std::string body = std::string(R"py(
@nki.jit
def k(table):
    src = mine(table)
    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm, name="dst")
    tile = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.sbuf)
    )py") + c.call + "\n    return out_of(dst)\n";
    auto r = run(body, "k", {table(3, 4, 8)});
    ASSERT_FALSE(r) << c.call;
    EXPECT_EQ(r.error().code, c.code) << c.call << ": " << r.error().format();
    EXPECT_EQ(r.error().loc.line, 27) << r.error().format();
  }
}

// Each rank writes into its own copy of the arguments: rank 1's in-place update of its input does
// not reach rank 0's, which the caller gets back.
TEST_F(NkiCollectives, EachRankHasItsOwnArguments) {
  auto r = run(R"py(
@nki.jit
def k(table):
    src = mine(table)
    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm, name="dst")
    ncc.all_reduce(srcs=[src], dsts=[dst], replica_group=ReplicaGroup([[0, 1]]), op=nl.add)
    H, W = src.shape
    nisa.dma_copy(dst=table.ap(pattern=[[W, H], [1, W]], scalar_offset=ncc.rank_id(), indirect_dim=0), src=dst)
    return table
)py",
               "k", {table(2, 4, 8)});
  ASSERT_TRUE(r) << r.error().format();
  const Tensor t = table(2, 4, 8);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      ASSERT_EQ(at(r->outputs[0], 0, i, j), at(t, 0, i, j) + at(t, 1, i, j));  // rank 0 wrote its row
      ASSERT_EQ(at(r->outputs[0], 1, i, j), at(t, 1, i, j));                   // rank 1 wrote its own copy
    }
}

}  // namespace
}  // namespace nki_agent
