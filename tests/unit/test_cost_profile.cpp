// The profile of a schedule: the metrics neuron-profile reports (HFU/MFU, MBU, HBM bytes, average
// DMA size, arithmetic intensity, roofline), their JSON names, the text summary, insights, the
// Perfetto trace (valid trace-event JSON with a track per engine and DMA queue, no overlapping
// slices on a track), and trace documents read back from JSON.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cost/cost.h"
#include "cost/perfetto.h"
#include "cost/trace_json.h"

namespace nki_agent {
namespace {

Strides row_major(const Shape& s) {
  Strides st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

OperandRecord op(Buffer b, const std::string& name, DType dt, Shape shape, bool write, int64_t offset = 0,
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
  if (buffer_is_on_chip(b)) o.partitions = o.shape[0];
  o.is_write = write;
  return o;
}

// A record's instruction from its text form (nki/opcodes.h).
InstrOp instr(const std::string& text) {
  const auto op = parse_instruction(text);
  if (!op) ADD_FAILURE() << "no instruction: " << text;
  return op.value_or(InstrOp());
}

InstructionRecord rec(Engine e, const std::string& opcode, std::vector<OperandRecord> ops, int line) {
  InstructionRecord r;
  r.engine = e;
  r.op = instr(opcode);
  r.operands = std::move(ops);
  r.loc.file = "/k/matmul.py";
  r.loc.line = line;
  r.elements = 1;
  return r;
}

// A small tiled bf16 matmul, out[256, 1024] = lhsT[256, 256].T @ rhs[256, 1024], as the front end
// traces it: loads per tile (into temporaries copied into the tile), matmuls, eviction, store.
Trace small_matmul() {
  Trace t;
  const DType bf = DType::kBFloat16;
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 2; ++k) {
        t.add(rec(Engine::kDma, "dma_copy",
                  {op(Buffer::kSbuf, "", bf, {128, 128}, true),
                   op(Buffer::kSharedHbm, "lhsT", bf, {128, 128}, false, k * 128 * 256 + m * 128, {256, 1})},
                  10));
        t.add(rec(Engine::kDma, "dma_copy",
                  {op(Buffer::kSbuf, "", bf, {128, 512}, true),
                   op(Buffer::kSharedHbm, "rhs", bf, {128, 512}, false, k * 128 * 1024 + n * 512, {1024, 1})},
                  11));
        t.add(rec(Engine::kTensor, "nc_matmul",
                  {op(Buffer::kPsum, "", DType::kFloat32, {128, 512}, true),
                   op(Buffer::kSbuf, "", bf, {128, 128}, false), op(Buffer::kSbuf, "", bf, {128, 512}, false)},
                  12));
      }
      t.add(
          rec(Engine::kVector, "tensor_copy",
              {op(Buffer::kSbuf, "", bf, {128, 512}, true), op(Buffer::kPsum, "", DType::kFloat32, {128, 512}, false)},
              13));
      t.add(rec(Engine::kDma, "dma_copy",
                {op(Buffer::kSharedHbm, "", bf, {128, 512}, true, m * 128 * 1024 + n * 512, {1024, 1}),
                 op(Buffer::kSbuf, "", bf, {128, 512}, false)},
                14));
    }
  return t;
}

TEST(CostProfile, MetricsAddUp) {
  auto hw = hardware_for_target("trn1");
  ASSERT_TRUE(hw);
  auto r = profile_trace(small_matmul(), *hw);
  ASSERT_TRUE(r) << r.error().format();
  const Profile& p = r->profile;
  EXPECT_EQ(p.instructions, 8 * 3 + 4 * 2);
  EXPECT_EQ(p.matmuls, 8);
  EXPECT_DOUBLE_EQ(p.model_flops, 8 * 2.0 * 128 * 128 * 512);
  // lhsT tiles 32 KiB x 8, rhs tiles 128 KiB x 8; the output 256 x 1024 bf16.
  EXPECT_EQ(p.hbm_read_bytes, 8 * 32768 + 8 * 131072);
  EXPECT_EQ(p.hbm_write_bytes, 256 * 1024 * 2);
  EXPECT_EQ(p.dma_count, 20);
  EXPECT_EQ(p.small_dmas, 20);  // 256 B and 1 KiB per partition
  EXPECT_NEAR(p.hfu, p.model_flops / (hw->pe_peak_flops_per_ns() * p.total_ns), 1e-12);
  EXPECT_NEAR(p.mbu, (p.hbm_read_bytes + p.hbm_write_bytes) / (hw->hbm_bytes_per_ns * p.total_ns), 1e-12);
  EXPECT_NEAR(p.arithmetic_intensity, p.model_flops / double(p.hbm_read_bytes + p.hbm_write_bytes), 1e-9);
  EXPECT_DOUBLE_EQ(p.roofline_ns, std::max(p.compute_bound_ns, p.memory_bound_ns));
  EXPECT_GE(p.total_ns, p.roofline_ns);
  EXPECT_NEAR(p.engines[size_t(Engine::kTensor)].active_ns, 8 * 512 / 2.8, 1e-6);
  // The critical path and idle time account for the whole kernel.
  double critical = p.critical_latency_ns + p.critical_idle_ns;
  for (const EngineStats& e : p.engines) critical += e.critical_ns;
  EXPECT_NEAR(critical, p.total_ns, 1e-6 * p.total_ns);
  double lines = 0;
  for (const LineStats& l : p.lines) lines += l.critical_ns;
  EXPECT_NEAR(lines, p.total_ns - p.critical_latency_ns - p.critical_idle_ns, 1e-6 * p.total_ns);
  std::map<std::string, bool> codes;
  for (const Insight& in : p.insights) codes[in.code] = true;
  EXPECT_TRUE(codes["small_dma"]);
  EXPECT_TRUE(codes["engine_waits_on_dma"]);
}

// A double-row FP8 matmul (trn2) contracts K = 256 in the cycles an ordinary matmul of the same M and
// N takes for K = 128: twice the FLOPs in the same Tensor-engine time.
TEST(CostProfile, DoubleRowMatmulDoublesThroughput) {
  auto hw = hardware_for_target("trn2");
  ASSERT_TRUE(hw);
  const DType f8 = DType::kFloat8E4M3;
  auto one = [&](const std::string& opcode, Shape st, Shape mv) {
    Trace t;
    t.add(rec(Engine::kTensor, opcode,
              {op(Buffer::kPsum, "acc", DType::kFloat32, {128, 512}, true), op(Buffer::kSbuf, "a", f8, st, false),
               op(Buffer::kSbuf, "b", f8, mv, false)},
              12));
    auto r = profile_trace(t, *hw);
    EXPECT_TRUE(r) << r.error().format();
    return r->profile;
  };
  const Profile ordinary = one("nc_matmul", {128, 128}, {128, 512});
  const Profile double_row = one("nc_matmul:double_row", {128, 2, 128}, {128, 2, 512});
  EXPECT_EQ(double_row.matmuls, 1);
  EXPECT_DOUBLE_EQ(double_row.model_flops, 2.0 * 256 * 128 * 512);
  EXPECT_DOUBLE_EQ(double_row.model_flops, 2 * ordinary.model_flops);
  EXPECT_DOUBLE_EQ(double_row.engines[size_t(Engine::kTensor)].active_ns,
                   ordinary.engines[size_t(Engine::kTensor)].active_ns);
}

TEST(CostProfile, JsonUsesNeuronProfileNames) {
  auto hw = hardware_for_target("trn1");
  auto r = profile_trace(small_matmul(), *hw);
  ASSERT_TRUE(r);
  const nlohmann::json j = profile_to_json(r->profile);
  const auto& s = j["summary"];
  for (const char* k : {"total_time", "hfu_estimated_percent", "mfu_estimated_percent", "mbu_estimated_percent",
                        "hbm_read_bytes", "hbm_write_bytes", "sbuf_read_bytes", "psum_write_bytes", "average_dma_size",
                        "dma_active_time_percent", "model_flops", "transpose_flops", "mm_arithmetic_intensity",
                        "peak_flops_bandwidth_ratio", "roofline_time_ns", "roofline_bound"})
    EXPECT_TRUE(s.contains(k)) << k;
  EXPECT_DOUBLE_EQ(s["total_time"].get<double>(), r->profile.total_ns * 1e-9);
  EXPECT_DOUBLE_EQ(s["average_dma_size"].get<double>(), double(r->profile.dma_bytes) / r->profile.dma_count);
  EXPECT_TRUE(j["engines"]["tensor"].contains("active_time_percent"));
  EXPECT_TRUE(j["engines"]["tensor"]["opcodes"].contains("nc_matmul"));
  ASSERT_FALSE(j["hot_lines"].empty());
  EXPECT_EQ(j["hot_lines"][0]["file"], "/k/matmul.py");
  EXPECT_FALSE(j["insights"].empty());
  EXPECT_EQ(j["target"], "trn1");

  const std::string text = profile_to_text(r->profile);
  for (const char* k : {"latency", "HFU", "roofline", "hbm", "dma", "engines", "hot lines", "matmul.py:1", "insights"})
    EXPECT_NE(text.find(k), std::string::npos) << k << "\n" << text;
}

TEST(CostProfile, PerfettoTraceHasATrackPerEngineAndQueue) {
  auto hw = hardware_for_target("trn1");
  auto r = profile_trace(small_matmul(), *hw);
  ASSERT_TRUE(r);
  PerfettoOptions po;
  po.title = "matmul.py:k on trn1";
  const std::string doc = perfetto_trace(small_matmul(), r->program, r->schedule, *hw, po);
  auto j = nlohmann::json::parse(doc, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::map<int, std::string> threads;
  std::map<int, std::vector<std::pair<double, double>>> slices;
  std::map<std::string, int> names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X") {
      slices[e["tid"].get<int>()].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
      ++names[e["name"].get<std::string>()];
      EXPECT_TRUE(e["args"].contains("line"));
    }
  }
  std::map<std::string, bool> have;
  for (const auto& [tid, name] : threads) have[name] = true;
  for (const char* t : {"TensorE (PE)", "VectorE (DVE)", "ScalarE (ACT)", "GpSimdE (POOL)", "qLoad", "qStore",
                        "DMA engine 0", "DMA engine 15"})
    EXPECT_TRUE(have[t]) << t;
  EXPECT_EQ(names["nc_matmul"], 8);
  EXPECT_EQ(names["tensor_copy"], 4);
  for (auto& [tid, v] : slices) {
    std::sort(v.begin(), v.end());
    for (size_t k = 1; k < v.size(); ++k)
      EXPECT_LE(v[k - 1].second, v[k].first + 1e-3) << "overlap on " << threads[tid];
  }
}

TEST(CostProfile, TraceDocumentsReadBack) {
  const Trace t = small_matmul();
  nlohmann::json doc = {{"kernel", "k.py"}, {"trace", t.to_json()}};
  auto back = trace_from_json(doc);
  ASSERT_TRUE(back) << back.error().format();
  ASSERT_EQ(back->size(), t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const auto& a = t.records()[i];
    const auto& b = back->records()[i];
    EXPECT_EQ(a.engine, b.engine);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.loc.line, b.loc.line);
    ASSERT_EQ(a.operands.size(), b.operands.size());
    for (size_t k = 0; k < a.operands.size(); ++k) {
      EXPECT_EQ(a.operands[k].shape, b.operands[k].shape);
      EXPECT_EQ(a.operands[k].strides, b.operands[k].strides);
      EXPECT_EQ(a.operands[k].offset, b.operands[k].offset);
      EXPECT_EQ(a.operands[k].buffer, b.operands[k].buffer);
      EXPECT_EQ(a.operands[k].dtype, b.operands[k].dtype);
      EXPECT_EQ(a.operands[k].is_write, b.operands[k].is_write);
    }
  }
  auto hw = hardware_for_target("trn1");
  EXPECT_DOUBLE_EQ(profile_trace(*back, *hw)->profile.total_ns, profile_trace(t, *hw)->profile.total_ns);

  for (const char* bad :
       {R"({"no": 1})", R"({"trace": 5})", R"({"trace": [{"engine": "warp"}]})",
        R"([{"engine": "dma", "opcode": "dma_copy", "operands": [{"buffer": "sbuf", "dtype": "float32",
                              "shape": [-1], "strides": [1], "offset": 0, "partitions": 0, "start_partition": 0, "bytes": 0}]}])",
        R"([{"engine": "dma", "opcode": "x", "operands": [{"buffer": "l2", "dtype": "float32"}]}])"}) {
    auto r = trace_from_json(nlohmann::json::parse(bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "nkia_trace_invalid") << bad;
  }
  // An opcode outside the table (nki/opcodes.h), or sub-ops it does not take, is named.
  for (const char* opcode : {"warp_shuffle", "tensor_tensor:sideways", "tensor_tensor", "iota:add"}) {
    auto r = trace_from_json(
        nlohmann::json::parse(fmt::format(R"([{{"engine": "vector", "opcode": "{}", "operands": []}}])", opcode)));
    ASSERT_FALSE(r) << opcode;
    EXPECT_EQ(r.error().code, "nkia_trace_invalid");
    EXPECT_NE(r.error().message.find(fmt::format("unknown opcode '{}'", opcode)), std::string::npos)
        << r.error().message;
  }
  auto missing = load_trace_file("/nonexistent/trace.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "nkia_trace_unreadable");
}

// Whatever a (recorded, possibly hand-edited) trace holds — odd shapes, zero sizes, negative and
// zero strides, partitions past 128, fp8 and int operands, opcodes on engines that do not run them — the model answers
// with a profile or a Diagnostic, never a crash or a hang.
TEST(CostProfile, ArbitraryTracesNeverCrash) {
  auto trn1 = hardware_for_target("trn1");
  auto trn2 = hardware_for_target("trn2");
  ASSERT_TRUE(trn1 && trn2);
  uint64_t state = 12345;
  auto rnd = [&](int64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  const Engine engines[] = {Engine::kTensor, Engine::kVector, Engine::kScalar, Engine::kGpSimd, Engine::kDma};
  const char* opcodes[] = {"nc_matmul",         "dma_copy",         "tensor_copy",  "memset",
                           "tensor_tensor:add", "activation:exp",   "nc_transpose", "iota",
                           "nc_stream_shuffle", "tensor_reduce:max"};
  const Buffer buffers[] = {Buffer::kSharedHbm, Buffer::kPrivateHbm, Buffer::kSbuf, Buffer::kPsum};
  const DType dtypes[] = {DType::kFloat32, DType::kBFloat16, DType::kInt8, DType::kFloat8E4M3, DType::kInt32};
  for (int trial = 0; trial < 200; ++trial) {
    Trace t;
    const int n = 1 + static_cast<int>(rnd(40));
    for (int i = 0; i < n; ++i) {
      InstructionRecord r;
      r.engine = engines[rnd(5)];
      r.op = instr(opcodes[rnd(10)]);
      r.loc.line = static_cast<int>(rnd(50));
      const int nops = static_cast<int>(rnd(4));
      for (int k = 0; k < nops; ++k) {
        OperandRecord o;
        o.buffer = buffers[rnd(4)];
        o.dtype = dtypes[rnd(5)];
        o.tensor = rnd(3) ? "" : "t" + std::to_string(rnd(3));
        const int rank = static_cast<int>(rnd(4));
        for (int d = 0; d < rank; ++d) {
          o.shape.push_back(rnd(5) == 0 ? 0 : 1 + rnd(300));
          o.strides.push_back(rnd(6) - 2);
        }
        o.offset = rnd(100000);
        o.start_partition = rnd(200);
        o.partitions = rank ? o.shape[0] : 0;
        o.bytes = rnd(1 << 20);
        o.is_write = k == 0;
        r.operands.push_back(std::move(o));
      }
      t.add(std::move(r));
    }
    for (const HardwareSpec* hw : {&*trn1, &*trn2}) {
      auto r = profile_trace(t, *hw);
      if (!r) {
        EXPECT_EQ(r.error().code, "nkia_profile_empty");
        continue;
      }
      EXPECT_GE(r->profile.total_ns, 0);
      EXPECT_FALSE(std::isnan(r->profile.total_ns));
      const nlohmann::json j = profile_to_json(r->profile);
      EXPECT_TRUE(j.contains("summary"));
      const std::string doc = perfetto_trace(t, r->program, r->schedule, *hw, {});
      EXPECT_FALSE(nlohmann::json::parse(doc, nullptr, false).is_discarded()) << "trial " << trial;
    }
  }
}

// SBUF space is counted by what each value holds: column blocks written into a wider tile (a
// weight transposed block by block into W^T [k, kt, n]) take their own columns, not the span from
// their first to their last element, so six live [128, 4, 128] blocks of a [128, 6, 768] fp32 tile
// hold 6 x 2 KiB a partition (their spans would claim 57 KiB).
TEST(CostProfile, SbufSpaceCountsTheElementsAStridedWriteHolds) {
  auto hw = hardware_for_target("trn1");
  ASSERT_TRUE(hw);
  const DType f = DType::kFloat32;
  Trace t;
  for (int nt = 0; nt < 6; ++nt)
    t.add(rec(Engine::kDma, "dma_copy",
              {op(Buffer::kSbuf, "wT", f, {128, 4, 128}, true, nt * 128, {6 * 768, 768, 1}),
               op(Buffer::kSharedHbm, "w", f, {128, 4, 128}, false, nt * 128, {768, 128 * 768, 1})},
              10));
  for (int nt = 0; nt < 6; ++nt)
    t.add(rec(Engine::kDma, "dma_copy",
              {op(Buffer::kSharedHbm, "out", f, {128, 4, 128}, true, nt * 128, {768, 128 * 768, 1}),
               op(Buffer::kSbuf, "wT", f, {128, 4, 128}, false, nt * 128, {6 * 768, 768, 1})},
              11));
  auto r = profile_trace(t, *hw);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->profile.peak_sbuf_bytes_per_partition, 6 * 4 * 128 * 4);
  EXPECT_EQ(r->profile.sbuf_oversubscribed, 0);
}

}  // namespace
}  // namespace nki_agent
