// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The executed trace on its way to the host: python_run collects every launch's instructions, in
// timing-only mode too (the same records, no numbers); the outcome's wire form carries the trace
// exactly and refuses malformed ones (truncated, wrong types, huge counts, bad enums) with a
// Diagnostic, never a crash; the trace's cap counts what it drops. The run's warnings
// (nkia_sbuf_capacity_exceeded) reach the outcome and its wire form.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "cost/hardware.h"
#include "cost/lower.h"
#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"
#include "runtime/received_bytes.h"

namespace nki_agent {
namespace {

// Many instructions of every engine: loads and stores, elementwise, activation with a bias,
// matmul accumulation, transposes, reductions, scans, statistics, iota and affine_select.
constexpr const char* kKernel = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def k(a, b):
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    sums = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    stats = nl.ndarray((P, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    tr = nl.ndarray((F, P), dtype=nl.float32, buffer=nl.shared_hbm)
    gram = nl.ndarray((F, F), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    bias = nl.load(a[:, 0:1])
    z = nl.add(x, y)
    e = nisa.activation(op=nl.exp, data=z, bias=bias, scale=0.5)
    nl.store(sums, value=nl.sum(e, axis=1, keepdims=True))
    nl.store(stats, value=nisa.bn_aggr(nisa.bn_stats(x)))
    ones = nl.ones((P, F), dtype=nl.float32)
    scan = nisa.tensor_tensor_scan(ones, x, 0.0, nl.multiply, nl.add)
    res = nl.zeros((F, F), nl.float32, buffer=nl.psum)
    res += nl.matmul(x, y, transpose_x=True)
    res += nl.matmul(x, y, transpose_x=True)
    nl.store(gram, value=nl.copy(res))
    ix = nl.arange(P)[:, None]
    iy = nl.arange(F)[None, :]
    nl.store(out, value=nisa.affine_select(iy <= ix, scan, -1.0))
    nl.store(tr, value=nl.copy(nl.transpose(x)))
    return out, sums, stats, tr, gram
)py";

// A host function launching two kernels: one trace, both launches, in order.
constexpr const char* kHost = R"py(
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def double(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(a), 2.0))
    return out

@nki.jit
def neg(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.negative(nl.load(a)))
    return out

def host(a):
    return neg(double(a))
)py";

class KernelTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static Tensor values(const Shape& s, float scale) {
    std::vector<float> v(static_cast<size_t>(shape_numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 89) - 44) * scale;
    return Tensor::from_f32(s, v);
  }
  static KernelCall call(const char* src, const char* entry, std::vector<Tensor> inputs) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = entry;
    c.inputs = std::move(inputs);
    return c;
  }
};

int64_t count_nan(const Tensor& t) {
  int64_t n = 0;
  for (float v : t.to_f32_vector()) n += std::isnan(v);
  return n;
}

TEST_F(KernelTrace, TimingOnlyTracesTheSameInstructionsAndComputesNothing) {
  KernelCall c = call(kKernel, "k", {values({128, 64}, 0.01f), values({128, 64}, 0.02f)});
  auto computed = python_run(c);
  ASSERT_TRUE(computed) << computed.error().format();
  c.compute = false;
  auto timed = python_run(c);
  ASSERT_TRUE(timed) << timed.error().format();

  ASSERT_GT(computed->trace.size(), 15u);
  EXPECT_EQ(computed->trace.to_json(), timed->trace.to_json());
  EXPECT_FALSE(timed->trace.truncated());
  // Every engine took part.
  const TraceSummary s = summarize(computed->trace);
  for (int e = 0; e < kNumEngines; ++e) EXPECT_GT(s.per_engine[e], 0) << engine_name(static_cast<Engine>(e));
  // Records name the kernel's file and its lines.
  for (const auto& r : computed->trace.records()) {
    EXPECT_EQ(r.loc.file, "kernel.py") << r.opcode_text();
    EXPECT_GT(r.loc.line, 6) << r.opcode_text();
  }

  // The outputs: numbers when computing, poison (NaN) everywhere when not.
  ASSERT_EQ(computed->outputs.size(), 5u);
  ASSERT_EQ(timed->outputs.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(timed->outputs[i].shape(), computed->outputs[i].shape()) << i;
    EXPECT_EQ(timed->outputs[i].dtype(), computed->outputs[i].dtype()) << i;
    EXPECT_EQ(count_nan(computed->outputs[i]), 0) << i;
    EXPECT_EQ(count_nan(timed->outputs[i]), timed->outputs[i].numel()) << i;
  }
}

TEST_F(KernelTrace, OneTraceForEveryLaunchOfARun) {
  KernelCall c = call(kHost, "host", {values({128, 32}, 0.5f)});
  c.src.root = "/kernels";
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  std::vector<std::string> ops;
  for (const auto& rec : r->trace.records()) ops.push_back(rec.opcode_text());
  EXPECT_EQ(ops, (std::vector<std::string>{"dma_copy", "tensor_scalar:multiply", "dma_copy", "dma_copy",
                                           "activation:negative", "dma_copy"}))
      << r->trace.to_json().dump();
  // With a root, records carry the paths Diagnostics carry.
  EXPECT_EQ(r->trace.records()[0].loc.file, "/kernels/kernel.py");
  EXPECT_FALSE(std::isnan(r->outputs[0].to_f32_vector()[1]));

  c.collect_trace = false;
  auto none = python_run(c);
  ASSERT_TRUE(none) << none.error().format();
  EXPECT_EQ(none->trace.size(), 0u);
  EXPECT_EQ(none->outputs[0].to_f32_vector(), r->outputs[0].to_f32_vector());

  c.target = "trn7";
  auto bad = python_run(c);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "nkia_unknown_target");
}

// nisa.reciprocal and nisa.scalar_tensor_tensor, in both dialects: each one Vector-engine record,
// priced on every target by its own cost rule (not the engine's catch-all, nor the Scalar engine's).
constexpr const char* kFusedLegacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

@nki.jit
def k(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    r = nisa.reciprocal(x)
    z = nisa.scalar_tensor_tensor(data=r, op0=nl.multiply, operand0=0.5, op1=nl.add, operand1=y)
    nl.store(out, value=z)
    return out
)py";

constexpr const char* kFusedCurrent = R"py(
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(a, b):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    y = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=y, src=b)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=r, data=x)
    z = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.scalar_tensor_tensor(dst=z, data=r, op0=nl.multiply, operand0=0.5, op1=nl.add, operand1=y)
    nisa.dma_copy(dst=out, src=z)
    return out
)py";

TEST_F(KernelTrace, ReciprocalAndScalarTensorTensorAreOneVectorInstructionEach) {
  for (const char* src : {kFusedLegacy, kFusedCurrent}) {
    KernelCall c = call(src, "k", {values({128, 512}, 0.01f), values({128, 512}, 0.02f)});
    auto r = python_run(c);
    ASSERT_TRUE(r) << r.error().format();
    std::vector<std::string> ops;
    for (const auto& rec : r->trace.records()) ops.push_back(rec.opcode_text());
    EXPECT_EQ(ops, (std::vector<std::string>{"dma_copy", "dma_copy", "reciprocal", "scalar_tensor_tensor:multiply:add",
                                             "dma_copy"}));
    ASSERT_EQ(r->trace.size(), 5u);
    EXPECT_EQ(r->trace.records()[2].engine, Engine::kVector);
    EXPECT_EQ(r->trace.records()[3].engine, Engine::kVector);
    // The numbers: 0.5 / a + b, with a's zeros giving inf.
    const std::vector<float> a = c.inputs[0].to_f32_vector(), b = c.inputs[1].to_f32_vector();
    const std::vector<float> got = r->outputs[0].to_f32_vector();
    for (size_t i = 0; i < 200; ++i) EXPECT_FLOAT_EQ(got[i], (1.0f / a[i]) * 0.5f + b[i]) << i;
    for (const std::string& target : target_names()) {
      auto hw = hardware_for_target(target);
      ASSERT_TRUE(hw) << hw.error().format();
      auto prog = lower_trace(r->trace, *hw);
      ASSERT_TRUE(prog) << prog.error().format();
      std::vector<std::string> rules;
      for (const CostOp& op : prog->ops)
        if (op.engine == Engine::kVector) rules.push_back(op.rule == kNoRule ? "" : hw->rules[op.rule].opcode);
      EXPECT_EQ(rules, (std::vector<std::string>{"reciprocal*", "scalar_tensor_tensor*"})) << target;
    }
  }
}

// What `check` sends: zero inputs made in the process, bound by name, and no output data back.
TEST_F(KernelTrace, ZeroInputsAndOutputSpecs) {
  KernelCall c = call(kKernel, "k", {});
  c.zero_inputs = {{"b", DType::kFloat32, {128, 64}}, {"a", DType::kFloat32, {128, 64}}};
  c.input_names = {"b", "a"};
  c.compute = false;
  c.want_outputs = false;
  auto r = python_run(c);
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->trace.to_json(),
            python_run(call(kKernel, "k", {values({128, 64}, 1), values({128, 64}, 2)}))->trace.to_json());
  EXPECT_TRUE(r->outputs.empty());
  std::vector<std::string> specs;
  for (const auto& s : r->output_specs) specs.push_back(s.to_string());
  EXPECT_EQ(specs, (std::vector<std::string>{"out0=float32[128, 64]", "out1=float32[128, 1]", "out2=float32[128, 2]",
                                             "out3=float32[64, 128]", "out4=float32[64, 64]"}));
  c.want_outputs = true;
  auto with_data = python_run(c);
  ASSERT_TRUE(with_data) << with_data.error().format();
  ASSERT_EQ(with_data->outputs.size(), 5u);
  EXPECT_EQ(with_data->outputs[4].shape(), (Shape{64, 64}));
  for (const Tensor& o : with_data->outputs)  // nothing was computed: every value is poison
    for (float v : o.to_f32_vector()) ASSERT_TRUE(std::isnan(v));

  // Bound by name: a bf16 b meets the float32 a in the matmul, which the checks refuse.
  c.zero_inputs[0].dtype = DType::kBFloat16;
  auto mixed = python_run(c);
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().code, "nkia_matmul_input_dtype") << mixed.error().format();
  EXPECT_EQ(mixed.error().loc.line, 24);
}

TEST_F(KernelTrace, TimingOnlyStillRunsEveryCheck) {
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    x = nl.load(a[0:128, :])
    y = nl.exp(x)
    big = nl.load(a)
    return a
)py";
  KernelCall c = call(src, "k", {values({256, 8}, 0.1f)});
  c.compute = false;
  auto r = python_run(c);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "err_num_partition_exceed_arch_limit") << r.error().format();
  EXPECT_EQ(r.error().loc.line, 9);
}

// ---- warnings ------------------------------------------------------------------------------------

// n loads of [128, 512] float32 (2 KiB per partition each) all live until the adds that follow: 100
// of them need 200 KiB per partition, more than trn1's 176 KiB of usable SBUF (and trn2's 208 KiB).
constexpr const char* kSbufHog = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a, n=100):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    tiles = []
    for i in range(n):
        tiles.append(nl.load(a))
    acc = nl.zeros(a.shape, nl.float32)
    for t in tiles:
        acc = nl.add(acc, t)
    nl.store(out, value=acc)
    return out

def twice(a):
    k(a)
    return k(a)
)py";

TEST_F(KernelTrace, SbufOverSubscriptionIsOneWarningAndTheKernelStillRuns) {
  const Tensor a = values({128, 512}, 0.25f);
  for (bool compute : {true, false}) {
    KernelCall c = call(kSbufHog, "k", {a});
    c.compute = compute;
    auto r = python_run(c);
    ASSERT_TRUE(r) << r.error().format();
    ASSERT_EQ(r->warnings.size(), 1u) << compute;
    const Diagnostic& w = r->warnings[0];
    EXPECT_EQ(w.code, "nkia_sbuf_capacity_exceeded");
    EXPECT_EQ(w.severity, Severity::kWarning);
    EXPECT_EQ(w.loc.file, "kernel.py");
    EXPECT_EQ(w.loc.line, 10);  // the load whose tile first went over
    EXPECT_NE(w.message.find("180224 usable per partition on trn1"), std::string::npos) << w.message;
    EXPECT_NE(w.message.find("(2048 bytes per partition)"), std::string::npos) << w.message;
    EXPECT_FALSE(w.hint.empty());
    // The peak: the 100 loads, the zeros and the first sum are live at the first add.
    EXPECT_NE(w.message.find(fmt::format("need {} bytes", 102 * 2048)), std::string::npos) << w.message;
    if (compute) {
      const auto got = r->outputs.at(0).to_f32_vector(), in = a.to_f32_vector();
      for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], 100 * in[i]) << i;
    }
  }
  // 96 tiles (198 KiB at the peak) fit trn2's 208 KiB, not trn1's.
  KernelCall c = call(kSbufHog, "k", {a});
  c.kwargs["n"] = "96";
  auto r1 = python_run(c);
  ASSERT_TRUE(r1) << r1.error().format();
  EXPECT_EQ(r1->warnings.size(), 1u);
  c.target = "trn2";
  auto r2 = python_run(c);
  ASSERT_TRUE(r2) << r2.error().format();
  EXPECT_TRUE(r2->warnings.empty()) << r2->warnings[0].format();
  // Two launches of one run: one warning, counted twice.
  auto twice = python_run(call(kSbufHog, "twice", {a}));
  ASSERT_TRUE(twice) << twice.error().format();
  ASSERT_EQ(twice->warnings.size(), 1u);
  EXPECT_NE(twice->warnings[0].message.find("(raised 2 times)"), std::string::npos) << twice->warnings[0].message;
}

TEST_F(KernelTrace, KernelsThatFitGetNoWarnings) {
  auto r = python_run(call(kKernel, "k", {values({128, 64}, 0.01f), values({128, 64}, 0.02f)}));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0].format();
  // Tiles made one after another in a long loop are never live together: 1000 loads of 2 KiB each.
  const char* src = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros(a.shape, nl.float32)
    for i in nl.sequential_range(1000):
        acc[...] = nl.add(acc, nl.load(a))
    nl.store(out, value=acc)
    return out
)py";
  KernelCall c = call(src, "k", {values({128, 512}, 0.25f)});
  c.compute = false;
  auto loop = python_run(c);
  ASSERT_TRUE(loop) << loop.error().format();
  EXPECT_TRUE(loop->warnings.empty()) << loop->warnings[0].format();
}

// ---- the wire form -------------------------------------------------------------------------------

OperandRecord operand(std::string name, Buffer b, DType t, Shape shape, Strides strides, int64_t offset, bool write) {
  OperandRecord o;
  o.tensor = std::move(name);
  o.buffer = b;
  o.dtype = t;
  o.shape = std::move(shape);
  o.strides = std::move(strides);
  o.offset = offset;
  o.partitions = b == Buffer::kSbuf || b == Buffer::kPsum ? o.shape[0] : 0;
  o.start_partition = b == Buffer::kSbuf ? 32 : 0;
  o.bytes = 12345678901;
  o.is_write = write;
  return o;
}

Trace sample_trace() {
  Trace t;
  InstructionRecord a;
  a.engine = Engine::kDma;
  a.op = Opcode::kDmaCopy;
  a.loc = {"/k/kernel.py", 12, 3};
  a.elements = 65536;
  a.operands = {operand("tile", Buffer::kSbuf, DType::kBFloat16, {128, 512}, {512, 1}, 0, true),
                operand("a", Buffer::kSharedHbm, DType::kFloat32, {128, 512}, {1024, 1}, 131584, false)};
  t.add(a);
  InstructionRecord b;
  b.engine = Engine::kTensor;
  b.op = Opcode::kNcMatmul;
  b.loc = {"/k/kernel.py", 14, 0};
  b.elements = std::numeric_limits<int64_t>::max();
  b.operands = {
      operand("", Buffer::kPsum, DType::kFloat32, {128, 512}, {-512, std::numeric_limits<int64_t>::min()}, -7, true),
      operand("ünïcode", Buffer::kPrivateHbm, DType::kFloat8E4M3, {}, {}, 0, false)};
  t.add(b);
  InstructionRecord c;  // no operands, no location
  c.engine = Engine::kGpSimd;
  c.op = Opcode::kIota;
  t.add(c);
  for (int i = 0; i < 3; ++i) t.add(a);
  return t;
}

void expect_same(const Trace& x, const Trace& y) {
  EXPECT_EQ(x.to_json(), y.to_json());
  EXPECT_EQ(x.dropped(), y.dropped());
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x.records()[i].loc.col, y.records()[i].loc.col) << i;
}

// The wire form's parts: header JSON and binary sections, to tamper with.
struct Wire {
  nlohmann::json header;
  std::string blobs;

  static Wire split(const std::string& bytes) {
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
    return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
  }
  std::string join() const {
    std::string text = header.dump(), out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
    return out + text + blobs;
  }
  // The trace section's bytes, by reference into blobs.
  std::string section() const {
    return blobs.substr(header["trace"]["offset"].get<size_t>(), header["trace"]["size"].get<size_t>());
  }
  void set_section(const std::string& s) {
    const size_t off = header["trace"]["offset"], size = header["trace"]["size"];
    blobs = blobs.substr(0, off) + s + blobs.substr(off + size);
    header["trace"]["size"] = s.size();
  }
};

KernelOutcome sample_outcome() {
  KernelOutcome o;
  o.outputs = {Tensor::from_f32({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6})};
  o.printed = "hi\n";
  o.output_specs = {{"out0", DType::kFloat32, {2, 3}}};
  o.trace = sample_trace();
  o.trace.add_dropped(41);
  return o;
}

void expect_rejected(const std::string& bytes, const std::string& why) {
  auto r = decode_outcome(bytes);
  ASSERT_FALSE(r) << why;
  EXPECT_EQ(r.error().code, "nkia_worker_protocol") << why << ": " << r.error().format();
}

TEST(TraceWire, AReplyPointsToContiguousOutputsAndReadsAsTheSameBytes) {
  // A large contiguous output is a span of its storage; a strided one (a transposed view) and a small
  // one are copied; the reply's parts in order are exactly encode_outcome's bytes, as the sandboxed
  // child writes them.
  KernelOutcome o = sample_outcome();
  Tensor big = Tensor::from_f32({256, 128}, std::vector<float>(256 * 128, 2.5f));
  o.outputs = {big, big.transpose(), o.outputs[0]};
  o.output_specs = {
      {"out0", DType::kFloat32, {256, 128}}, {"out1", DType::kFloat32, {128, 256}}, {"out2", DType::kFloat32, {2, 3}}};
  const Reply reply = encode_outcome_reply(o);
  EXPECT_EQ(reply.flatten(), encode_outcome(o));
  int spans = 0;
  for (const Reply::Part& p : reply.parts())
    if (p.data != nullptr) {
      ++spans;
      EXPECT_EQ(static_cast<const void*>(p.data), big.data());  // not a copy
      EXPECT_EQ(p.size, static_cast<size_t>(big.nbytes()));
    }
  EXPECT_EQ(spans, 1);
  size_t total = 0;
  for (const Reply::Part& p : reply.parts()) total += p.bytes().size();
  EXPECT_EQ(total, reply.size());
}

// Bytes in 64-byte aligned memory of their own, as a host reads a reply (runtime/received_bytes.h).
std::shared_ptr<ReceivedBytes> received_copy(const std::string& bytes) {
  auto m = ReceivedBytes::make(static_cast<int64_t>(bytes.size()));
  EXPECT_TRUE(m);
  std::memcpy(m->bytes(), bytes.data(), bytes.size());
  return m;
}

// Outputs read from memory a host holds the reply in are views of it, not copies: each array's
// elements lie on a 64-byte boundary of the reply, in one run's reply and in each of several runs'.
TEST(TraceWire, OutputsViewTheReplysMemory) {
  KernelOutcome o = sample_outcome();
  Tensor big = Tensor::from_f32({256, 128}, std::vector<float>(256 * 128, 2.5f));
  Tensor odd = Tensor::from_f32({3, 5}, std::vector<float>(15, -1.25f));  // 60 bytes: the next one moves
  o.outputs = {odd, big, big.transpose(), o.outputs[0]};
  o.output_specs = {{"out0", DType::kFloat32, {3, 5}},
                    {"out1", DType::kFloat32, {256, 128}},
                    {"out2", DType::kFloat32, {128, 256}},
                    {"out3", DType::kFloat32, {2, 3}}};
  auto within = [](const Tensor& t, const std::shared_ptr<ReceivedBytes>& m) {
    const auto* p = static_cast<const uint8_t*>(t.data());
    return p >= m->bytes() && p + t.nbytes() <= m->bytes() + m->byte_size();
  };
  auto check = [&](const KernelOutcome& back, const std::shared_ptr<ReceivedBytes>& m) {
    ASSERT_EQ(back.outputs.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(within(back.outputs[i], m)) << "output " << i << " was copied";
      EXPECT_EQ(reinterpret_cast<uintptr_t>(back.outputs[i].data()) % 64, 0u) << i;
      EXPECT_EQ(back.outputs[i].to_f32_vector(), o.outputs[i].to_f32_vector()) << i;
      EXPECT_EQ(back.outputs[i].shape(), o.outputs[i].shape()) << i;
    }
  };
  {
    auto m = received_copy(encode_outcome_reply(o).flatten());
    auto back = decode_outcome(m->view(), m);
    ASSERT_TRUE(back) << back.error().format();
    check(*back, m);
    Tensor kept = back->outputs[1];
    back = decode_outcome(encode_outcome(o));  // without memory: copies
    ASSERT_TRUE(back);
    EXPECT_EQ(back->outputs[1].to_f32_vector(), o.outputs[1].to_f32_vector());
    const std::weak_ptr<ReceivedBytes> alive = m;
    m.reset();
    EXPECT_FALSE(alive.expired()) << "a view must keep the reply's memory";
    EXPECT_EQ(kept.to_f32_vector(), o.outputs[1].to_f32_vector());
  }
  Reply runs;
  append_run_outcome(runs, o);
  append_run_outcome(runs, o);
  auto m = received_copy(runs.flatten());
  auto back = decode_run_outcomes(m->view(), 2, m);
  ASSERT_TRUE(back) << back.error().format();
  ASSERT_EQ(back->size(), 2u);
  for (const auto& r : *back) {
    ASSERT_TRUE(r) << r.error().format();
    check(*r, m);
  }
}

TEST(TraceWire, RoundTripsATrace) {
  KernelOutcome o = sample_outcome();
  auto back = decode_outcome(encode_outcome(o));
  ASSERT_TRUE(back) << back.error().format();
  expect_same(o.trace, back->trace);
  EXPECT_EQ(back->trace.dropped(), 41);
  EXPECT_TRUE(back->trace.truncated());
  EXPECT_EQ(back->printed, "hi\n");
  EXPECT_EQ(back->outputs[0].to_f32_vector(), o.outputs[0].to_f32_vector());
  ASSERT_EQ(back->output_specs.size(), 1u);
  EXPECT_EQ(back->output_specs[0].to_string(), "out0=float32[2, 3]");

  // Compact: strings once in the table, a few bytes per number.
  Wire w = Wire::split(encode_outcome(o));
  EXPECT_EQ(w.header["trace"]["strings"].size(), 8u);  // 2 opcodes + iota, 2 files (one empty), 4 tensor names
  EXPECT_LT(w.section().size() * 4, o.trace.to_json().dump().size());

  // Warnings travel with their code, severity, location, hint and notes.
  KernelOutcome ow = sample_outcome();
  Diagnostic wd = Diagnostic::error("nkia_sbuf_capacity_exceeded", "too much", "less");
  wd.severity = Severity::kWarning;
  wd.at({"/k/kernel.py", 9, 4}).with_note("a note");
  ow.warnings = {wd, wd};
  ow.warnings[1].code = "nkia_uninitialized_read";
  auto wb = decode_outcome(encode_outcome(ow));
  ASSERT_TRUE(wb) << wb.error().format();
  ASSERT_EQ(wb->warnings.size(), 2u);
  EXPECT_EQ(wb->warnings[0].to_json(), wd.to_json());
  EXPECT_EQ(wb->warnings[1].code, "nkia_uninitialized_read");
  EXPECT_TRUE(decode_outcome(encode_outcome(o))->warnings.empty());

  // An empty trace, and a call's new fields.
  auto empty = decode_outcome(encode_outcome(KernelOutcome{}));
  ASSERT_TRUE(empty) << empty.error().format();
  EXPECT_EQ(empty->trace.size(), 0u);
  KernelCall c;
  c.entry = "k";
  c.compute = false;
  c.collect_trace = false;
  c.target = "trn2";
  c.want_outputs = false;
  c.inputs = {Tensor::zeros({2}, DType::kInt8)};
  c.zero_inputs = {{"big", DType::kBFloat16, {4096, 65536}}, {"s", DType::kFloat8E5M2, {}}};
  c.input_names = {"x", "big", "s"};
  auto cb = decode_call(encode_call(c));
  ASSERT_TRUE(cb) << cb.error().format();
  EXPECT_FALSE(cb->compute);
  EXPECT_FALSE(cb->collect_trace);
  EXPECT_FALSE(cb->want_outputs);
  EXPECT_EQ(cb->target, "trn2");
  ASSERT_EQ(cb->zero_inputs.size(), 2u);
  EXPECT_EQ(cb->zero_inputs[0].to_string(), "big=bfloat16[4096, 65536]");
  EXPECT_EQ(cb->zero_inputs[1].to_string(), "s=float8_e5m2[]");
  EXPECT_LT(encode_call(c).size(), 4096u);  // shapes travel, not data
}

TEST(TraceWire, RejectsMalformedSpecs) {
  const Wire w = Wire::split(encode_outcome(sample_outcome()));
  auto tamper = [&](const std::string& why, auto&& fn) {
    Wire t = w;
    fn(t.header);
    expect_rejected(t.join(), why);
  };
  tamper("no output_specs", [](auto& h) { h.erase("output_specs"); });
  tamper("specs not a list", [](auto& h) { h["output_specs"] = "out0"; });
  tamper("an unknown dtype", [](auto& h) { h["output_specs"][0]["dtype"] = "float64"; });
  tamper("a negative dimension", [](auto& h) { h["output_specs"][0]["shape"][0] = -2; });
  tamper("a fractional dimension", [](auto& h) { h["output_specs"][0]["shape"][0] = 2.5; });
  tamper("a shape that is no list", [](auto& h) { h["output_specs"][0]["shape"] = 6; });
  tamper("specs that disagree with the outputs", [](auto& h) { h["output_specs"][0]["shape"] = {3, 2}; });
  tamper("more specs than outputs", [](auto& h) { h["output_specs"].push_back(h["output_specs"][0]); });
  tamper("an overflowing element count", [](auto& h) {
    h["output_specs"][0]["shape"] = {uint64_t{1} << 40, uint64_t{1} << 40};
  });
  tamper("a rank of 100", [](auto& h) { h["output_specs"][0]["shape"] = std::vector<int>(100, 1); });

  // A call's zero inputs: bounded like --shapes, named consistently.
  KernelCall c;
  c.zero_inputs = {{"a", DType::kFloat32, {4, 4}}};
  const Wire cw = Wire::split(encode_call(c));
  auto bad_call = [&](const std::string& why, auto&& fn) {
    Wire t = cw;
    fn(t.header);
    auto r = decode_call(t.join());
    ASSERT_FALSE(r) << why;
    EXPECT_EQ(r.error().code, "nkia_worker_protocol") << why;
  };
  bad_call("too many elements", [](auto& h) { h["zero_inputs"][0]["shape"] = {int64_t{1} << 20, int64_t{1} << 12}; });
  bad_call("names for some inputs", [](auto& h) { h["input_names"] = {"a", "b"}; });
  bad_call("no zero_inputs", [](auto& h) { h.erase("zero_inputs"); });
  bad_call("want_outputs a string", [](auto& h) { h["want_outputs"] = "yes"; });
  bad_call("compute a number", [](auto& h) { h["compute"] = 0; });
  bad_call("an unknown target", [](auto& h) { h["target"] = "trn9"; });
}

TEST(TraceWire, RejectsMalformedWarnings) {
  const Wire good = Wire::split(encode_outcome(sample_outcome()));
  nlohmann::json warning = {{"code", "nkia_sbuf_capacity_exceeded"}, {"severity", "warning"}, {"message", "m"}};
  Wire w = good;
  w.header["warnings"] = nlohmann::json::array({warning});
  ASSERT_TRUE(decode_outcome(w.join()));
  w.header.erase("warnings");
  expect_rejected(w.join(), "no warnings");
  w.header["warnings"] = "x";
  expect_rejected(w.join(), "warnings not an array");
  w.header["warnings"] = nlohmann::json::array();
  for (size_t i = 0; i <= kMaxWarnings; ++i) w.header["warnings"].push_back(warning);
  expect_rejected(w.join(), "more than the cap");
  nlohmann::json error = warning;
  error["severity"] = "error";
  w.header["warnings"] = nlohmann::json::array({error});
  expect_rejected(w.join(), "an error among the warnings");
  w.header["warnings"] = nlohmann::json::array({{{"severity", "warning"}, {"message", "m"}}});
  expect_rejected(w.join(), "a warning without a code");
  // The encoder keeps at most the cap.
  KernelOutcome many;
  Diagnostic d = Diagnostic::error("nkia_x", "m");
  d.severity = Severity::kWarning;
  many.warnings.assign(kMaxWarnings + 3, d);
  auto back = decode_outcome(encode_outcome(many));
  ASSERT_TRUE(back) << back.error().format();
  EXPECT_EQ(back->warnings.size(), kMaxWarnings);
}

TEST(TraceWire, RejectsMalformedTraces) {
  const std::string good = encode_outcome(sample_outcome());
  const Wire w = Wire::split(good);
  ASSERT_TRUE(decode_outcome(w.join()));

  // Truncated: the message, and the section (its size shrunk).
  for (size_t cut : {size_t{1}, size_t{5}, size_t{40}})
    expect_rejected(good.substr(0, good.size() - cut), "cut message");
  {
    const std::string s = w.section();
    for (size_t keep : {size_t{0}, size_t{1}, s.size() / 2, s.size() - 1}) {
      Wire t = w;
      t.set_section(s.substr(0, keep));
      expect_rejected(t.join(), "cut section to " + std::to_string(keep));
    }
    Wire extra = w;
    extra.set_section(s + std::string(1, '\0'));
    expect_rejected(extra.join(), "trailing bytes");
  }
  // Wrong types and missing fields.
  auto tamper = [&](const std::string& why, auto&& fn) {
    Wire t = w;
    fn(t.header["trace"]);
    expect_rejected(t.join(), why);
  };
  tamper("records a string", [](auto& h) { h["records"] = "6"; });
  tamper("records negative", [](auto& h) { h["records"] = -1; });
  tamper("records a float", [](auto& h) { h["records"] = 6.0; });
  tamper("dropped negative", [](auto& h) { h["dropped"] = -3; });
  tamper("dropped beyond int64", [](auto& h) { h["dropped"] = std::numeric_limits<uint64_t>::max(); });
  tamper("strings not a list", [](auto& h) { h["strings"] = "dma_copy"; });
  tamper("a string that is a number", [](auto& h) { h["strings"][0] = 7; });
  tamper("no strings", [](auto& h) { h.erase("strings"); });
  tamper("no offset", [](auto& h) { h.erase("offset"); });
  tamper("trace not an object", [](auto& h) { h = nlohmann::json::array(); });
  tamper("a string table too short", [](auto& h) { h["strings"].erase(h["strings"].size() - 1); });
  // Huge or inconsistent counts: never allocated for, never read past the section.
  tamper("records beyond the cap", [](auto& h) { h["records"] = kMaxTraceRecords + 1; });
  tamper("records 2^40", [](auto& h) { h["records"] = uint64_t{1} << 40; });
  tamper("records 2^64-1", [](auto& h) { h["records"] = std::numeric_limits<uint64_t>::max(); });
  tamper("more records than bytes", [](auto& h) { h["records"] = 7; });
  tamper("fewer records than bytes", [](auto& h) { h["records"] = 5; });
  tamper("section beyond the message", [](auto& h) { h["offset"] = uint64_t{1} << 62; });
  tamper("size beyond the message", [](auto& h) { h["size"] = std::numeric_limits<uint64_t>::max(); });
  {
    Wire t = w;
    t.header.erase("trace");
    expect_rejected(t.join(), "no trace");
  }
}

// Hand-made sections: one record each, varints written by hand.
TEST(TraceWire, RejectsBadRecords) {
  const Wire w = Wire::split(encode_outcome(KernelOutcome{}));
  auto with = [&](const std::string& section, uint64_t records, std::vector<std::string> strings) {
    Wire t = w;
    t.set_section(section);
    t.header["trace"]["records"] = records;
    t.header["trace"]["strings"] = strings;
    return t.join();
  };
  const std::vector<std::string> table = {"iota", "f.py", "t"};
  // engine, opcode, file, line, col, elements, operand count
  const std::string ok_record("\x01\x00\x01\x14\x00\x02\x00", 7);
  auto good = decode_outcome(with(ok_record, 1, table));
  ASSERT_TRUE(good) << good.error().format();
  ASSERT_EQ(good->trace.size(), 1u);
  EXPECT_EQ(good->trace.records()[0].loc.line, 10);  // zigzag 0x14
  EXPECT_EQ(good->trace.records()[0].elements, 1);

  expect_rejected(with(std::string("\x05\x00\x01\x14\x00\x02\x00", 7), 1, table), "engine 5");
  expect_rejected(with(std::string("\x01\x03\x01\x14\x00\x02\x00", 7), 1, table), "opcode index 3");
  expect_rejected(with(std::string("\x01\x00\x01\x13\x00\x02\x00", 7), 1, table), "negative line");
  expect_rejected(with(std::string("\x01\x00\x01\x14\x00\x03\x00", 7), 1, table), "negative elements");
  expect_rejected(with(std::string("\x01\x00\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 14), 1, table),
                  "a varint of 11 bytes");
  expect_rejected(with(std::string("\x01\x00\x01\x80\x80\x80\x80\x10\x00\x02\x00", 11), 1, table), "a line beyond int");
  expect_rejected(with(std::string("\x01\x00\x01\x14\x00\x02\xe8\x07", 8), 1, table), "1000 operands");
  expect_rejected(with(ok_record, 1, {}), "an empty table");
  expect_rejected(with(ok_record, 1, {"warp_shuffle", "f.py", "t"}), "an unknown opcode");
  expect_rejected(with(ok_record, 1, {"tensor_tensor:sideways", "f.py", "t"}), "an unknown sub-op");
  expect_rejected(with(ok_record, 1, {"tensor_tensor", "f.py", "t"}), "a missing sub-op");
  {
    auto unknown = decode_outcome(with(ok_record, 1, {"warp_shuffle", "f.py", "t"}));
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("unknown opcode 'warp_shuffle'"), std::string::npos)
        << unknown.error().message;
  }
  // An operand: tensor, tensor id, buffer, dtype, is_write, rank, shape, rank, strides, offset,
  // partitions, start partition, bytes.
  const std::string rec1 = std::string("\x01\x00\x01\x14\x00\x02\x01", 7);
  const std::string op_ok("\x02\x07\x02\x00\x01\x01\x04\x01\x02\x00\x04\x00\x10", 13);
  auto op_good = decode_outcome(with(rec1 + op_ok, 1, table));
  ASSERT_TRUE(op_good) << op_good.error().format();
  const OperandRecord& o = op_good->trace.records()[0].operands[0];
  EXPECT_EQ(o.tensor, "t");
  EXPECT_EQ(o.tensor_id, 7u);
  EXPECT_EQ(o.buffer, Buffer::kSbuf);
  EXPECT_EQ(o.shape, Shape{2});
  EXPECT_EQ(o.strides, Strides{1});
  EXPECT_EQ(o.partitions, 2);
  EXPECT_EQ(o.bytes, 8);
  EXPECT_TRUE(o.is_write);
  auto bad_op = [&](std::string op, const char* why) { expect_rejected(with(rec1 + op, 1, table), why); };
  std::string x = op_ok;
  x[2] = '\x04';
  bad_op(x, "buffer 4");
  x = op_ok;
  x[3] = static_cast<char>(kNumDTypes);
  bad_op(x, "an unknown dtype");
  x = op_ok;
  x[4] = '\x02';
  bad_op(x, "is_write 2");
  x = op_ok;
  x[6] = '\x03';
  bad_op(x, "a negative dimension");
  EXPECT_NE(decode_outcome(with(rec1 + x, 1, table)).error().message.find("negative dimension"), std::string::npos);
  x = op_ok;
  x[7] = '\x02';
  bad_op(x, "strides of another rank");
  bad_op(std::string("\x02\x07\x02\x00\x01\xc1\x00", 7), "rank 65");
  bad_op(op_ok.substr(0, 9), "an operand cut short");
}

TEST(TraceCap, KeepsTheFirstRecordsAndCountsTheRest) {
  Trace a;
  InstructionRecord r;
  r.op = Opcode::kMemset;
  for (size_t i = 0; i < kMaxTraceRecords + 5; ++i) a.add(r);
  EXPECT_EQ(a.size(), kMaxTraceRecords);
  EXPECT_EQ(a.dropped(), 5);
  EXPECT_TRUE(a.truncated());
  Trace b = sample_trace();
  const int64_t nb = static_cast<int64_t>(b.size());
  a.append(std::move(b));
  EXPECT_EQ(a.size(), kMaxTraceRecords);
  EXPECT_EQ(a.dropped(), 5 + nb);
  EXPECT_EQ(summarize(a).dropped, 5 + nb);

  Trace c = sample_trace(), d = sample_trace();
  c.add_dropped(2);
  c.append(std::move(d));
  EXPECT_EQ(c.size(), 12u);
  EXPECT_EQ(c.dropped(), 2);
}

}  // namespace
}  // namespace nki_agent
