// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The cost model's scheduler on hand-built traces whose timings are worked out by hand below:
// independent engines overlap, a RAW chain adds up (with semaphore and DMA trigger latencies),
// DMA/compute overlap appears with double buffering and vanishes with single buffering, PSUM bank
// pressure stalls the TensorE, NCv2's shared SBUF port serialises DVE and POOL, and the published
// data points (a dependent-ACT II of ~189 ns on trn1, one DMA engine moving 32 KiB in ~1416 ns on
// trn2, a 512-cycle bf16 matmul) come out of the real hardware descriptions.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/cost.h"

namespace nki_agent {
namespace {

// Round numbers: every engine at 1 GHz (1 cycle = 1 ns), cost = N cycles, DMA engines at 32 B/ns
// with a 100 ns trigger latency, 10 ns semaphores. SBUF capacity and PSUM banks are parameters.
std::string test_toml(int64_t sbuf_bytes = 1 << 20, int banks = 8, bool ncv2_ports = false) {
  std::string t = R"(
[target]
name = "test"
core = "test core"
core_version = 2
[limits]
partitions = 128
sbuf_bytes_per_partition = )" +
                  std::to_string(sbuf_bytes) + R"(
psum_bytes_per_partition = 16384
psum_banks = )" + std::to_string(banks) +
                  R"(
psum_bank_bytes = 2048
psum_fmax = 512
psum_min_align = 4
gemm_stationary_fmax = 128
gemm_moving_fmax = 512
engine_fmax_sbuf = 65536
engine_fmax_psum = 4096
bn_stats_fmax = 512
max8_fmax = 16384
gpsimd_partition_group = 16
gpsimd_gather_max_indices = 4096
[memory]
hbm_bytes_per_ns = 100.0
[sync]
semaphore_latency_ns = 10.0
[engines.tensor]
clock_ghz = 1.0
[engines.vector]
clock_ghz = 1.0
[engines.scalar]
clock_ghz = 1.0
[engines.gpsimd]
clock_ghz = 1.0
[dma]
engines = 16
partitions_per_engine = 8
bytes_per_ns = 32.0
efficiency = 1.0
descriptor_overhead_ns = 0.0
min_descriptor_bytes = 1
trigger_latency_ns = 100.0
max_inflight_per_queue = 0
[[rules]]
engine = "tensor"
opcode = "nc_matmul"
model = "matmul"
init = 64
fp32_factor = 4
[[rules]]
opcode = "tensor_copy"
per_element = 2.0
[[rules]]
opcode = "*"
per_element = 1.0
)";
  if (ncv2_ports) t += "[[concurrency]]\nmemory = \"sbuf\"\nengines = [\"vector\", \"gpsimd\"]\n";
  return t;
}

HardwareSpec spec(const std::string& toml) {
  auto hw = parse_hardware(toml, "test.toml");
  EXPECT_TRUE(hw) << (hw ? "" : hw.error().format());
  return *hw;
}

Strides row_major(const Shape& s) {
  Strides st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// An operand covering a whole tensor (or a row-major view with explicit strides and offset).
OperandRecord operand(Buffer b, const std::string& name, DType dt, Shape shape, bool write, int64_t offset = 0,
                      Strides strides = {}) {
  OperandRecord o;
  o.tensor = name;
  o.buffer = b;
  o.dtype = dt;
  o.strides = strides.empty() ? row_major(shape) : strides;
  o.shape = std::move(shape);
  o.offset = offset;
  int64_t n = 1;
  for (int64_t d : o.shape) n *= d;
  o.bytes = n * dtype_size(dt);
  if (buffer_is_on_chip(b)) o.partitions = o.shape.empty() ? 1 : o.shape[0];
  o.is_write = write;
  return o;
}
OperandRecord sb(const std::string& name, Shape shape, bool write = false, DType dt = DType::kFloat32) {
  return operand(Buffer::kSbuf, name, dt, std::move(shape), write);
}
OperandRecord ps(const std::string& name, Shape shape, bool write = false) {
  return operand(Buffer::kPsum, name, DType::kFloat32, std::move(shape), write);
}
OperandRecord hbm(const std::string& name, Shape shape, bool write = false, DType dt = DType::kFloat32) {
  return operand(Buffer::kSharedHbm, name, dt, std::move(shape), write);
}

// A record's instruction from its text form (nki/opcodes.h).
InstrOp instr(const std::string& text) {
  const auto op = parse_instruction(text);
  if (!op) ADD_FAILURE() << "no instruction: " << text;
  return op.value_or(InstrOp());
}

InstructionRecord rec(Engine e, const std::string& opcode, std::vector<OperandRecord> ops, int line = 1) {
  InstructionRecord r;
  r.engine = e;
  r.op = instr(opcode);
  r.operands = std::move(ops);
  r.loc.file = "kernel.py";
  r.loc.line = line;
  r.elements = 1;
  return r;
}

CostReport run(const Trace& t, const HardwareSpec& hw) {
  auto r = profile_trace(t, hw);
  EXPECT_TRUE(r) << (r ? "" : r.error().format());
  return std::move(*r);
}

double start_of(const CostReport& r, size_t op) {
  return r.schedule.ops[op].start;
}
double end_of(const CostReport& r, size_t op) {
  return r.schedule.ops[op].end;
}

TEST(CostScheduler, IndependentEnginesOverlap) {
  const HardwareSpec hw = spec(test_toml());
  Trace t;
  t.add(rec(Engine::kVector, "tensor_scalar:add", {sb("a", {128, 1000}, true), sb("b", {128, 1000})}));  // 1000 ns
  t.add(rec(Engine::kScalar, "activation:exp", {sb("c", {128, 500}, true), sb("d", {128, 500})}));       // 500 ns
  t.add(rec(Engine::kGpSimd, "iota", {sb("e", {128, 300}, true)}));                                      // 300 ns
  t.add(rec(Engine::kTensor, "nc_matmul",
            {ps("p", {128, 512}, true), sb("s", {128, 128}, false, DType::kBFloat16),
             sb("m", {128, 512}, false, DType::kBFloat16)}));  // 512 ns
  const CostReport r = run(t, hw);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(start_of(r, i), 0.0) << i;
  EXPECT_DOUBLE_EQ(r.profile.total_ns, 1000.0);
  EXPECT_DOUBLE_EQ(r.profile.engines[size_t(Engine::kVector)].active_ns, 1000.0);
  EXPECT_DOUBLE_EQ(r.profile.engines[size_t(Engine::kScalar)].active_ns, 500.0);
  EXPECT_DOUBLE_EQ(r.profile.engines[size_t(Engine::kGpSimd)].active_ns, 300.0);
  EXPECT_DOUBLE_EQ(r.profile.engines[size_t(Engine::kTensor)].active_ns, 512.0);

  // The same two ops on one engine run one after the other (in order).
  Trace t2;
  t2.add(rec(Engine::kVector, "tensor_scalar:add", {sb("a", {128, 1000}, true), sb("b", {128, 1000})}));
  t2.add(rec(Engine::kVector, "tensor_scalar:add", {sb("c", {128, 500}, true), sb("d", {128, 500})}));
  const CostReport r2 = run(t2, hw);
  EXPECT_DOUBLE_EQ(start_of(r2, 1), 1000.0);
  EXPECT_DOUBLE_EQ(r2.profile.total_ns, 1500.0);
  EXPECT_EQ(r2.schedule.ops[1].reason, StartReason::kEngine);
}

TEST(CostScheduler, RawChainAddsLatencies) {
  const HardwareSpec hw = spec(test_toml());
  Trace t;
  // load: 128 partitions x 1000 fp32 = 8 partitions x 4000 B = 32000 B per engine at 32 B/ns = 1000 ns,
  // after the 100 ns trigger latency: [100, 1100).
  t.add(rec(Engine::kDma, "dma_copy", {sb("a", {128, 1000}, true), hbm("x", {128, 1000})}));
  // DVE reads a: ready 1100 + 10 (semaphore), 128 columns -> 1000 ns (N = 1000 elements of a) -> [1110, 2110).
  t.add(rec(Engine::kVector, "tensor_scalar:multiply", {sb("b", {128, 1000}, true), sb("a", {128, 1000})}));
  // ACT reads b: [2120, 3120).
  t.add(rec(Engine::kScalar, "activation:exp", {sb("c", {128, 1000}, true), sb("b", {128, 1000})}));
  // store c: triggered at 3120 (the trigger latency covers the semaphore), data [3220, 4220).
  t.add(rec(Engine::kDma, "dma_copy", {hbm("y", {128, 1000}, true), sb("c", {128, 1000})}));
  const CostReport r = run(t, hw);
  EXPECT_DOUBLE_EQ(start_of(r, 0), 100.0);
  EXPECT_DOUBLE_EQ(end_of(r, 0), 1100.0);
  EXPECT_DOUBLE_EQ(start_of(r, 1), 1110.0);
  EXPECT_DOUBLE_EQ(end_of(r, 1), 2110.0);
  EXPECT_DOUBLE_EQ(start_of(r, 2), 2120.0);
  EXPECT_DOUBLE_EQ(end_of(r, 2), 3120.0);
  EXPECT_DOUBLE_EQ(r.schedule.ops[3].trigger, 3120.0);
  EXPECT_DOUBLE_EQ(end_of(r, 3), 4220.0);
  EXPECT_DOUBLE_EQ(r.profile.total_ns, 4220.0);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(r.schedule.ops[i].reason, StartReason::kDependency) << i;
    EXPECT_EQ(r.schedule.ops[i].by_op, i - 1) << i;
  }
  EXPECT_EQ(r.deps.raw, 3);
  // The whole kernel is one chain: the critical path is the kernel's length, 2 x 1000 ns of DMA,
  // 2 x 1000 ns of compute, and 220 ns of latencies (100 + 10 + 10 + 100).
  EXPECT_NEAR(r.profile.critical_latency_ns, 220.0, 1e-6);
  EXPECT_NEAR(r.profile.engines[size_t(Engine::kDma)].critical_ns, 2000.0, 1e-6);
  EXPECT_EQ(r.profile.hbm_read_bytes, 128 * 1000 * 4);
  EXPECT_EQ(r.profile.hbm_write_bytes, 128 * 1000 * 4);
}

// acc = 0; for i in 0..n-1: tile = load(x[i]); acc += tile. A tile (unnamed, re-declared every
// iteration) and acc are 4000 B per partition each.
Trace accumulate_loop(int n) {
  Trace t;
  t.add(rec(Engine::kVector, "memset", {sb("acc", {128, 1000}, true)}, 1));  // 1000 ns
  for (int i = 0; i < n; ++i) {
    OperandRecord src = hbm("x", {128, 1000}, false);
    src.offset = int64_t{i} * 128 * 1000;
    t.add(rec(Engine::kDma, "dma_copy", {sb("", {128, 1000}, true), src}, 2));
    t.add(rec(Engine::kVector, "tensor_tensor:add",
              {sb("acc", {128, 1000}, true), sb("acc", {128, 1000}), sb("", {128, 1000})}, 3));
  }
  return t;
}

TEST(CostScheduler, DoubleBufferingOverlapsDmaWithCompute) {
  // Room for acc and two tiles: the load of tile i+1 runs while tile i is added; tile i+2 waits
  // for the add of tile i to free its buffer.
  //   memset [0, 1000)        load0 data [100, 1100)      add0 [1110, 2110)
  //   load1 data [1100, 2100) (engines busy until 1100)    add1 [2110, 3110)
  //   load2 trigger 2110 (tile0 freed) data [2210, 3210)  add2 [3220, 4220)
  //   load3 trigger 3110 (tile1 freed) data [3210, 4210)  add3 [4220, 5220)
  const CostReport dbl = run(accumulate_loop(4), spec(test_toml(3 * 4000)));
  EXPECT_DOUBLE_EQ(dbl.profile.total_ns, 5220.0);
  EXPECT_DOUBLE_EQ(end_of(dbl, 3), 2100.0);               // load1
  EXPECT_DOUBLE_EQ(dbl.schedule.ops[5].trigger, 2110.0);  // load2 waited for SBUF space
  EXPECT_EQ(dbl.schedule.ops[5].reason, StartReason::kSbufSpace);
  EXPECT_DOUBLE_EQ(end_of(dbl, 8), 5220.0);

  // Room for acc and one tile: every load waits for the previous add (no overlap).
  //   load0 [100, 1100), add0 [1110, 2110); load1 trigger 2110, data [2210, 3210), add1 [3220, 4220);
  //   load2 [4320, 5320), add2 [5330, 6330); load3 [6430, 7430), add3 [7440, 8440).
  const CostReport single = run(accumulate_loop(4), spec(test_toml(2 * 4000)));
  EXPECT_DOUBLE_EQ(single.profile.total_ns, 8440.0);
  EXPECT_LT(dbl.profile.total_ns, single.profile.total_ns);
  EXPECT_EQ(single.profile.sbuf_oversubscribed, 0);

  // Unlimited SBUF: the loads stream back to back at the DMA rate; the adds follow 10 ns behind.
  const CostReport deep = run(accumulate_loop(4), spec(test_toml(1 << 20)));
  EXPECT_DOUBLE_EQ(deep.profile.total_ns, 4100.0 + 10.0 + 1000.0);
  // Too little room even for one tile: it is flagged, not waited for forever.
  const CostReport tiny = run(accumulate_loop(2), spec(test_toml(4000)));
  EXPECT_GT(tiny.profile.sbuf_oversubscribed, 0);
  bool flagged = false;
  for (const Insight& in : tiny.profile.insights) flagged = flagged || in.code == "sbuf_oversubscribed";
  EXPECT_TRUE(flagged);
}

// G accumulation groups: one matmul into a PSUM tile (512 ns), then a DVE copy out (2 x 512 ns).
Trace matmul_groups(int groups) {
  Trace t;
  for (int g = 0; g < groups; ++g) {
    t.add(rec(Engine::kTensor, "nc_matmul",
              {ps("", {128, 512}, true), sb("s", {128, 128}, false, DType::kBFloat16),
               sb("m", {128, 512}, false, DType::kBFloat16)},
              10));
    OperandRecord out = sb("out", {128, 512}, true);
    out.offset = 0;
    out.tensor = "out" + std::to_string(g);
    t.add(rec(Engine::kVector, "tensor_copy", {out, ps("", {128, 512})}, 11));
  }
  return t;
}

TEST(CostScheduler, PsumBankPressureStallsTheTensorEngine) {
  // 8 banks: matmuls back to back [0,512) [512,1024) [1024,1536) [1536,2048); copies
  // [522,1546) [1546,2570) [2570,3594) [3594,4618).
  const CostReport free_banks = run(matmul_groups(4), spec(test_toml(1 << 20, 8)));
  EXPECT_DOUBLE_EQ(start_of(free_banks, 6), 1536.0);
  EXPECT_DOUBLE_EQ(free_banks.profile.total_ns, 4618.0);
  EXPECT_EQ(free_banks.profile.peak_psum_banks, 4);
  // 1 bank: each matmul waits for the previous copy to free the bank (+10 ns semaphore):
  // mm1 [1556, 2068), c1 [2078, 3102), mm2 [3112, 3624), c2 [3634, 4658), mm3 [4668, 5180), c3 [5190, 6214).
  const CostReport one_bank = run(matmul_groups(4), spec(test_toml(1 << 20, 1)));
  EXPECT_DOUBLE_EQ(start_of(one_bank, 2), 1556.0);
  EXPECT_EQ(one_bank.schedule.ops[2].reason, StartReason::kPsumBank);
  EXPECT_EQ(one_bank.schedule.ops[2].by_op, 1u);
  EXPECT_DOUBLE_EQ(one_bank.profile.total_ns, 6214.0);
  EXPECT_EQ(one_bank.profile.peak_psum_banks, 1);
  EXPECT_NEAR(one_bank.profile.engines[size_t(Engine::kTensor)].wait_psum_ns, 3 * (1556.0 - 512.0), 1e-6);
  bool flagged = false;
  for (const Insight& in : one_bank.profile.insights) flagged = flagged || in.code == "psum_bank_pressure";
  EXPECT_TRUE(flagged);
}

TEST(CostScheduler, AccumulationGroupsChainAndZeroingFolds) {
  const HardwareSpec hw = spec(test_toml());
  Trace t;
  t.add(rec(Engine::kVector, "memset", {ps("", {128, 512}, true)}));  // nl.zeros(psum): folded into the matmul
  for (int k = 0; k < 3; ++k)
    t.add(rec(Engine::kTensor, "nc_matmul",
              {ps("", {128, 512}, true), sb("s", {128, 128}, false, DType::kBFloat16),
               sb("m", {128, 512}, false, DType::kBFloat16)}));
  t.add(rec(Engine::kVector, "tensor_copy", {sb("o", {128, 512}, true), ps("", {128, 512})}));
  const CostReport r = run(t, hw);
  ASSERT_EQ(r.program.ops.size(), 4u);
  EXPECT_EQ(r.program.folded_psum_zeroing, 1);
  // One allocation (a bank) for the group, kept by the three matmuls and read by the copy.
  EXPECT_DOUBLE_EQ(end_of(r, 2), 3 * 512.0);
  EXPECT_DOUBLE_EQ(start_of(r, 3), 3 * 512.0 + 10.0);
  EXPECT_EQ(r.profile.peak_psum_banks, 1);
}

TEST(CostScheduler, AssignmentCopiesFoldIntoTheirProducer) {
  const HardwareSpec hw = spec(test_toml());
  Trace t;
  // t[...] = nl.load(x): the front end loads into a temporary and copies it into t.
  t.add(rec(Engine::kDma, "dma_copy", {sb("", {128, 1000}, true), hbm("x", {128, 1000})}));
  t.add(rec(Engine::kVector, "tensor_copy", {sb("t", {128, 1000}, true), sb("", {128, 1000})}));
  t.add(rec(Engine::kScalar, "activation:exp", {sb("u", {128, 1000}, true), sb("t", {128, 1000})}));
  const CostReport r = run(t, hw);
  ASSERT_EQ(r.program.ops.size(), 2u);
  EXPECT_EQ(r.program.folded_copies, 1);
  EXPECT_EQ(r.program.ops[0].engine, Engine::kDma);
  // The activation reads t, which the DMA now writes: ready at 1100 + 10.
  EXPECT_DOUBLE_EQ(start_of(r, 1), 1110.0);
}

TEST(CostScheduler, HbmWritesWaitForEarlierReadersAndWriters) {
  const HardwareSpec hw = spec(test_toml());
  Trace t;
  t.add(rec(Engine::kDma, "dma_copy", {hbm("y", {128, 1000}, true), sb("a", {128, 1000})}));  // store y
  t.add(rec(Engine::kDma, "dma_copy", {sb("b", {128, 1000}, true), hbm("y", {128, 1000})}));  // load y: RAW
  t.add(rec(Engine::kDma, "dma_copy", {hbm("y", {128, 1000}, true), sb("c", {128, 1000})}));  // store y: WAR + WAW
  // Disjoint column blocks of one HBM tensor do not depend on each other.
  OperandRecord left = operand(Buffer::kSharedHbm, "z", DType::kFloat32, {128, 512}, true, 0, {1024, 1});
  OperandRecord right = operand(Buffer::kSharedHbm, "z", DType::kFloat32, {128, 512}, true, 512, {1024, 1});
  t.add(rec(Engine::kDma, "dma_copy", {left, sb("d", {128, 512})}));
  t.add(rec(Engine::kDma, "dma_copy", {right, sb("e", {128, 512})}));
  const CostReport r = run(t, hw);
  EXPECT_EQ(r.deps.num_preds(3), 0u);
  EXPECT_EQ(r.deps.num_preds(4), 0u);
  EXPECT_EQ(r.deps.num_preds(1), 1u);
  EXPECT_GE(r.deps.num_preds(2), 1u);
  EXPECT_GE(r.schedule.ops[1].trigger, end_of(r, 0));
  EXPECT_GE(r.schedule.ops[2].trigger, end_of(r, 1));
  EXPECT_GE(r.deps.war, 1);
}

TEST(CostScheduler, Ncv2SharedSbufPortSerialisesVectorAndGpSimd) {
  Trace t;
  t.add(rec(Engine::kVector, "tensor_scalar:add", {sb("a", {128, 1000}, true), sb("b", {128, 1000})}));
  t.add(rec(Engine::kGpSimd, "iota", {sb("e", {128, 300}, true)}));
  const CostReport apart = run(t, spec(test_toml(1 << 20, 8, false)));
  EXPECT_DOUBLE_EQ(apart.profile.total_ns, 1000.0);
  const CostReport shared = run(t, spec(test_toml(1 << 20, 8, true)));
  EXPECT_DOUBLE_EQ(start_of(shared, 1), 1000.0);
  EXPECT_EQ(shared.schedule.ops[1].reason, StartReason::kConcurrency);
  EXPECT_DOUBLE_EQ(shared.profile.total_ns, 1300.0);
}

TEST(CostScheduler, DmaEnginesFollowPartitions) {
  const HardwareSpec hw = spec(test_toml());
  Trace t;
  OperandRecord quarter = sb("q", {32, 1000}, true);
  quarter.start_partition = 32;
  quarter.offset = 32 * 1000;
  quarter.strides = {1000, 1};
  t.add(rec(Engine::kDma, "dma_copy", {quarter, hbm("x", {32, 1000})}));
  const CostReport r = run(t, hw);
  EXPECT_EQ(r.program.ops[0].dma_first_engine, 4);
  EXPECT_EQ(r.program.ops[0].dma_engines, 4);
  // 8 partitions x 4000 B per engine, whatever the partition count.
  EXPECT_DOUBLE_EQ(end_of(r, 0) - start_of(r, 0), 1000.0);
  for (const DmaSlice& s : r.schedule.dma_slices) {
    EXPECT_GE(s.engine, 4);
    EXPECT_LT(s.engine, 8);
  }
}

// DMA buffers: a [128, 512] fp32 tile of a [*, 512] tensor is one HBM run (16 KiB per engine, one
// buffer) scattered into 8 partitions; the same tile of a [*, 4096] tensor is 8 runs of 2 KiB at a
// 16 KiB pitch, a gather that moves at (ref / pitch)^exponent of the rate and says so in the profile.
TEST(CostScheduler, DmaBuffersOnEachSideAndGathersAtAPitch) {
  auto hw = hardware_for_target("trn1");
  ASSERT_TRUE(hw) << hw.error().format();
  const DmaSpec& d = hw->dma;
  ASSERT_GT(d.gather_pitch_exponent, 0);
  const double bytes_ns = 8 * 512 * 4 / d.engine_bytes_per_ns();

  Trace contiguous;
  contiguous.add(rec(Engine::kDma, "dma_copy", {sb("t", {128, 512}, true), hbm("x", {128, 512})}));
  const CostReport c = run(contiguous, *hw);
  EXPECT_DOUBLE_EQ(c.program.ops[0].dma_gather_factor, 1.0);
  EXPECT_NEAR(c.program.ops[0].duration_ns, d.transfer_overhead_ns + (1 + 8) * d.descriptor_overhead_ns + bytes_ns,
              1e-9);

  Trace strided;
  strided.add(rec(
      Engine::kDma, "dma_copy",
      {sb("t", {128, 512}, true), operand(Buffer::kSharedHbm, "x", DType::kFloat32, {128, 512}, false, 0, {4096, 1})}));
  const CostReport g = run(strided, *hw);
  const double factor = std::pow(d.gather_pitch_ref_bytes / (4096.0 * 4), d.gather_pitch_exponent);
  EXPECT_NEAR(g.program.ops[0].dma_gather_factor, factor, 1e-12);
  EXPECT_NEAR(g.program.ops[0].duration_ns,
              d.transfer_overhead_ns + (8 + 8) * d.descriptor_overhead_ns + bytes_ns / factor, 1e-9);
  auto has = [](const Profile& p, const char* code) {
    for (const Insight& in : p.insights)
      if (in.code == code) return true;
    return false;
  };
  EXPECT_TRUE(has(g.profile, "strided_dma"));
  EXPECT_FALSE(has(c.profile, "strided_dma"));
}

// Nothing starts before the launch's fixed cost: one instruction ends at launch + its own cost.
TEST(CostScheduler, TheLaunchComesFirst) {
  auto hw = hardware_for_target("trn1");
  ASSERT_TRUE(hw) << hw.error().format();
  ASSERT_GT(hw->launch_overhead_ns, 0);
  Trace t;
  t.add(rec(Engine::kScalar, "activation:exp", {sb("o", {128, 512}, true), sb("i", {128, 512})}));
  const CostReport r = run(t, *hw);
  EXPECT_DOUBLE_EQ(start_of(r, 0), hw->launch_overhead_ns);
  EXPECT_NEAR(r.profile.total_ns, hw->launch_overhead_ns + r.program.ops[0].duration_ns, 1e-9);
}

// A DMA that accumulates into HBM (dma_copy:add, dst_rmw_op) moves its bytes at compute_efficiency
// of a copy's bandwidth (half on trn1 and trn2, spec §6.5) and reads its destination too.
TEST(CostScheduler, DmaAccumulationRunsAtItsOwnBandwidthAndReadsItsDestination) {
  for (const char* target : {"trn1", "trn2"}) {
    auto hw = hardware_for_target(target);
    ASSERT_TRUE(hw) << hw.error().format();
    EXPECT_DOUBLE_EQ(hw->dma.compute_efficiency, 0.5) << target;
    Trace t;
    t.add(rec(Engine::kDma, "dma_copy", {hbm("out", {128, 2048}, true), sb("t", {128, 2048})}));
    t.add(rec(Engine::kDma, "dma_copy:add", {hbm("acc", {128, 2048}, true), sb("u", {128, 2048})}));
    const CostReport r = run(t, *hw);
    const CostOp& copy = r.program.ops[0];
    const CostOp& add = r.program.ops[1];
    // The same buffers; the bytes take twice as long.
    const double bytes_ns = 128.0 * 2048 * 4 / hw->dma.engines / hw->dma.engine_bytes_per_ns();
    EXPECT_NEAR(add.duration_ns - copy.duration_ns, bytes_ns, 1e-6 * copy.duration_ns) << target;
    EXPECT_EQ(copy.hbm_read_bytes, 0) << target;
    EXPECT_EQ(add.hbm_read_bytes, 128 * 2048 * 4) << target;
    EXPECT_EQ(add.hbm_write_bytes, 128 * 2048 * 4) << target;
  }
}

// Published data points, on the real hardware descriptions.

TEST(CostCalibrationPoints, Trn2OneEngineMoves32KiBIn1416ns) {
  auto hw = hardware_for_target("trn2");
  ASSERT_TRUE(hw) << hw.error().format();
  Trace t;  // nki-spec §6.5: A[4, 4096] bf16 HBM -> SBUF: 4 partitions, one DMA engine
  t.add(rec(Engine::kDma, "dma_copy",
            {sb("a", {4, 4096}, true, DType::kBFloat16), hbm("in", {4, 4096}, false, DType::kBFloat16)}));
  const CostReport r = run(t, *hw);
  ASSERT_EQ(r.schedule.dma_slices.size(), 1u);
  const DmaSlice& s = r.schedule.dma_slices[0];
  EXPECT_EQ(s.engine, 0);
  const double ns = s.end - s.start;
  EXPECT_NEAR(ns, 1416.0, 0.02 * 1416.0) << "one engine, 32 KiB";
  std::printf("trn2: one DMA engine moves 32 KiB HBM->SBUF in %.1f ns (published: 1416 ns)\n", ns);
}

TEST(CostCalibrationPoints, Trn1DependentActivationsIssueEvery189ns) {
  auto hw = hardware_for_target("trn1");
  ASSERT_TRUE(hw) << hw.error().format();
  Trace t;  // nki-spec §6.3: dependent ACT instructions on 1 element per partition issue every ~189 ns
  t.add(rec(Engine::kScalar, "activation:copy", {sb("a", {128, 1}, true), sb("x", {128, 1})}));
  for (int i = 0; i < 10; ++i)
    t.add(rec(Engine::kScalar, "activation:copy",
              {sb(i % 2 ? "a" : "b", {128, 1}, true), sb(i % 2 ? "b" : "a", {128, 1})}));
  const CostReport r = run(t, *hw);
  const double ii = (start_of(r, 10) - start_of(r, 1)) / 9.0;
  EXPECT_NEAR(ii, 189.0, 0.02 * 189.0);
}

TEST(CostCalibrationPoints, MatmulCostsFollowTheTensorEngineFormula) {
  auto trn1 = hardware_for_target("trn1");
  ASSERT_TRUE(trn1);
  Trace t;
  t.add(rec(Engine::kTensor, "nc_matmul",
            {ps("p", {128, 512}, true), sb("s", {128, 128}, false, DType::kBFloat16),
             sb("m", {128, 512}, false, DType::kBFloat16)}));
  t.add(rec(Engine::kTensor, "nc_matmul", {ps("q", {128, 512}, true), sb("s", {128, 128}), sb("m", {128, 512})}));
  t.add(rec(Engine::kTensor, "nc_matmul",
            {ps("r", {128, 64}, true), sb("s", {128, 128}, false, DType::kBFloat16),
             sb("m", {128, 64}, false, DType::kBFloat16)}));
  const CostReport r = run(t, *trn1);
  EXPECT_DOUBLE_EQ(r.program.ops[0].cycles, 512.0);      // max(min(64, 128), 512)
  EXPECT_DOUBLE_EQ(r.program.ops[1].cycles, 4 * 512.0);  // fp32: 4x
  EXPECT_DOUBLE_EQ(r.program.ops[2].cycles, 64.0);       // short moving: the 64-cycle floor
  EXPECT_NEAR(r.program.ops[0].duration_ns, 512.0 / 2.8, 1e-9);
  EXPECT_DOUBLE_EQ(r.profile.model_flops, 2.0 * 128 * 128 * (512 + 512 + 64));
  bool fp32 = false, small = false;
  for (const Insight& in : r.profile.insights) {
    fp32 = fp32 || in.code == "fp32_matmul";
    small = small || in.code == "matmul_small_moving";
  }
  EXPECT_TRUE(fp32);
  EXPECT_TRUE(small);
}

TEST(CostCalibrationPoints, Trn2TensorEngineThrottlesAfterIdle) {
  auto trn2 = hardware_for_target("trn2");
  ASSERT_TRUE(trn2);
  Trace t;
  for (int i = 0; i < 40; ++i)
    t.add(rec(Engine::kTensor, "nc_matmul",
              {ps("p", {128, 512}, true), sb("s", {128, 128}, false, DType::kBFloat16),
               sb("m", {128, 512}, false, DType::kBFloat16)}));
  const CostReport r = run(t, *trn2);
  const double nominal = 40 * 512 / 2.4;
  // The first ~3 us of PE work run at ~75% on average (50% ramping to 100%): ~1 us lost.
  EXPECT_NEAR(r.profile.total_ns - trn2->launch_overhead_ns - nominal, 3000.0 * (1.0 / 0.75 - 1.0), 1.0);
  EXPECT_GT(r.profile.pe_throttle_ns, 0);
}

TEST(CostScheduler, EmptyTraceIsADiagnostic) {
  Trace t;
  auto r = profile_trace(t, spec(test_toml()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_profile_empty");
  Trace t2;
  t2.add(rec(Engine::kVector, "memset", {}));
  auto r2 = profile_trace(t2, spec(test_toml()));
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, "nkia_profile_empty");
}

}  // namespace
}  // namespace nki_agent
