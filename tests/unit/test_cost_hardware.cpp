// Hardware descriptions: the compiled-in trn1/trn2 files parse and carry the spec's numbers (nki-spec
// §2.1, §6.2, §6.5); malformed or absurd descriptions become Diagnostics that name the problem
// (the file, the line for syntax errors, the field otherwise), never a crash or a silent default.
// Cost rules resolve against the opcode table (nki/opcodes.h): a rule that can match nothing is a
// load error, and every opcode has a rule of its own on every target, or a stated reason why not.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include <tuple>

#include "cost/calibrate.h"
#include "cost/hardware.h"

namespace nki_agent {
namespace {

TEST(CostHardware, EmbeddedTargetsCarryTheSpecNumbers) {
  auto targets = target_names();
  ASSERT_GE(targets.size(), 2u);
  auto trn1 = hardware_for_target("trn1");
  ASSERT_TRUE(trn1) << trn1.error().format();
  EXPECT_EQ(trn1->target.core, "NeuronCore-v2");
  EXPECT_DOUBLE_EQ(trn1->engine(Engine::kTensor).clock_ghz, 2.8);
  EXPECT_DOUBLE_EQ(trn1->engine(Engine::kVector).clock_ghz, 1.12);
  EXPECT_DOUBLE_EQ(trn1->engine(Engine::kScalar).clock_ghz, 1.4);
  EXPECT_EQ(trn1->target.sbuf_bytes_per_partition, 180224);
  EXPECT_EQ(trn1->target.psum_banks, 8);
  EXPECT_EQ(trn1->dma.engines, 16);
  // Fitted (data/calibration/trn1.toml) within 17 B/ns (DMA bandwidth guide) .. 27.2 GB/s (DMA overview).
  EXPECT_GE(trn1->dma.bytes_per_ns, 17.0);
  EXPECT_LE(trn1->dma.bytes_per_ns, 27.2);
  EXPECT_EQ(trn1->concurrency.size(), 2u);  // DVE/POOL on SBUF, DVE/ACT on PSUM
  // 2 * 128 * 128 * 2.8 GHz = 91.75 TFLOPS; the tutorial's balance of ~222 flop/B.
  EXPECT_NEAR(trn1->pe_peak_flops_per_ns(), 91750.4, 0.1);
  EXPECT_NEAR(trn1->pe_peak_flops_per_ns() / trn1->hbm_bytes_per_ns, 224, 3);

  auto trn2 = hardware_for_target("trn2");
  ASSERT_TRUE(trn2) << trn2.error().format();
  EXPECT_EQ(trn2->target.core, "NeuronCore-v3");
  EXPECT_DOUBLE_EQ(trn2->engine(Engine::kTensor).clock_ghz, 2.4);
  EXPECT_EQ(trn2->target.sbuf_bytes_per_partition, 212984);
  EXPECT_DOUBLE_EQ(trn2->dma.bytes_per_ns, 23.0);
  EXPECT_TRUE(trn2->concurrency.empty());
  EXPECT_GT(trn2->engine(Engine::kTensor).throttle_ramp_ns, 0);
  // Every rule names its source.
  for (const HardwareSpec* hw : {&*trn1, &*trn2})
    for (const CostRule& r : hw->rules) EXPECT_FALSE(r.source.empty()) << hw->target.name << " " << r.opcode;
}

// Every free parameter of a shipped target names a number of the file, says why it is free, and
// the shipped value lies in its range (the value nki-agent calibrate fitted, or the hand-set one).
TEST(CostHardware, ShippedFreeParametersLieInTheirRanges) {
  auto trn1 = hardware_for_target("trn1");
  ASSERT_TRUE(trn1) << trn1.error().format();
  EXPECT_GE(trn1->free_parameters.size(), 5u);
  const toml::table root = toml::parse(target_text("trn1"));
  for (const FreeParameter& p : trn1->free_parameters) {
    const std::optional<double> v = root.at_path(p.key).value<double>();
    ASSERT_TRUE(v.has_value()) << p.key;
    EXPECT_GE(*v, p.min) << p.key;
    EXPECT_LE(*v, p.max) << p.key;
    EXPECT_FALSE(p.source.empty()) << p.key;
  }
}

TEST(CostHardware, UnknownTargetIsADiagnostic) {
  auto hw = hardware_for_target("trn9");
  ASSERT_FALSE(hw);
  EXPECT_EQ(hw.error().code, "nkia_unknown_target");
  EXPECT_NE(hw.error().hint.find("trn1"), std::string::npos);
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

void expect_invalid(const std::string& toml, const std::string& code, const std::string& mentions) {
  auto hw = parse_hardware(toml, "bad.toml");
  ASSERT_FALSE(hw) << "accepted: " << mentions;
  EXPECT_EQ(hw.error().code, code) << hw.error().format();
  EXPECT_NE(hw.error().message.find(mentions), std::string::npos) << hw.error().format();
  EXPECT_FALSE(hw.error().hint.empty());
}

TEST(CostHardware, MalformedDescriptionsAreDiagnostics) {
  const std::string good(target_text("trn1"));
  ASSERT_TRUE(parse_hardware(good, "trn1.toml"));

  // Not TOML at all: the line is reported.
  auto syntax = parse_hardware("[target]\nname = \"x\"\n[memory\npartitions = 1\n", "bad.toml");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().code, "nkia_hardware_syntax");
  EXPECT_EQ(syntax.error().loc.line, 3);
  expect_invalid("", "nkia_hardware_invalid", "[target]");

  expect_invalid(with(good, "clock_ghz = 2.8 ", "clock_ghz = -2.8 "), "nkia_hardware_invalid",
                 "engines.tensor.clock_ghz");
  expect_invalid(with(good, "clock_ghz = 2.8 ", "clock_ghz = \"fast\" "), "nkia_hardware_invalid", "must be a number");
  expect_invalid(with(good, "clock_ghz = 2.8 ", "clokc_ghz = 2.8 "), "nkia_hardware_invalid", "clokc_ghz");
  expect_invalid(with(good, "psum_banks = 8 ", "psum_banks = 80 "), "nkia_hardware_invalid", "do not fit");
  auto no_dma = set_target_numbers(good, {{"dma.bytes_per_ns", 0}}, "bad.toml");
  ASSERT_TRUE(no_dma) << no_dma.error().format();
  expect_invalid(*no_dma, "nkia_hardware_invalid", "dma.bytes_per_ns");
  expect_invalid(with(good, "efficiency = 1.0 ", "efficiency = 1.5 "), "nkia_hardware_invalid", "dma.efficiency");
  expect_invalid(with(good, "engine = \"tensor\"\nopcode = \"nc_matmul\"", "engine = \"tpu\"\nopcode = \"nc_matmul\""),
                 "nkia_hardware_invalid", "tpu");
  expect_invalid(with(good, "model = \"matmul\"", "model = \"magic\""), "nkia_hardware_invalid", "magic");
  expect_invalid(with(good, "dtypes = [\"bfloat16\"]", "dtypes = [\"bfloat99\"]"), "nkia_hardware_invalid", "bfloat99");
  expect_invalid(with(good, "memory = \"sbuf\"", "memory = \"hbm\""), "nkia_hardware_invalid", "hbm");
  expect_invalid(with(good, "[engines.gpsimd]", "[engines.npu]"), "nkia_hardware_invalid", "npu");
  expect_invalid(good.substr(0, good.find("[[rules]]")), "nkia_hardware_invalid", "rules");
  expect_invalid(good + "\n[extra]\nx = 1\n", "nkia_hardware_invalid", "extra");
  // [[calibrate]]: a key that names no number of the model, an empty range, a key free twice.
  const std::string free =
      "\n[[calibrate]]\nkey = \"sync.semaphore_latency_ns\"\nmin = 1.0\nmax = 9.0\nsource = \"s\"\n";
  expect_invalid(good + "\n[[calibrate]]\nkey = \"dma.warp_speed\"\nmin = 0.0\nmax = 1.0\nsource = \"s\"\n",
                 "nkia_hardware_invalid", "dma.warp_speed");
  expect_invalid(good + "\n[[calibrate]]\nkey = \"limits.partitions\"\nmin = 0.0\nmax = 1.0\nsource = \"s\"\n",
                 "nkia_hardware_invalid", "limits.partitions");
  expect_invalid(good + "\n[[calibrate]]\nkey = \"dma.engines\"\nmin = 5.0\nmax = 5.0\nsource = \"s\"\n",
                 "nkia_hardware_invalid", "empty");
  expect_invalid(good + free, "nkia_hardware_invalid", "free twice");
  expect_invalid(good + "\n[[calibrate]]\nkey = \"dma.engines\"\nmin = 1.0\nmax = 9.0\n", "nkia_hardware_invalid",
                 "source");
}

// A rule appended after the others, with the line it starts on.
std::pair<std::string, int> with_rule(const std::string& good, const std::string& body) {
  const std::string text = good + "\n[[rules]]\n" + body + "\nsource = \"test\"\n";
  int line = 1;
  for (size_t i = 0; i < good.size() + 1; ++i) line += text[i] == '\n';
  return {text, line};
}

TEST(CostHardware, RulesThatMatchNoOpcodeAreLoadErrors) {
  const std::string good(target_text("trn1"));
  auto base = parse_hardware(good, "trn1.toml");
  ASSERT_TRUE(base) << base.error().format();
  const std::string index = fmt::format("rules[{}]", base->rules.size());
  for (const auto& [body, mentions] : std::vector<std::pair<std::string, std::string>>{
           {"engine = \"vector\"\nopcode = \"reciprocl*\"", "matches no opcode"},
           {"engine = \"vector\"\nopcode = \"warp_shuffle\"", "is no opcode"},
           {"engine = \"gpsimd\"\nopcode = \"nc_matmul\"", "on the gpsimd engine"},
           {"engine = \"scalar\"\nopcode = \"tensor_tensor:*\"", "matches no opcode"},
           {"opcode = \"tensor_tensor:sideways\"", "is no instruction"},
           {"opcode = \"tensor_tensor:ad*\"", "not inside a sub-op"},
           {"opcode = \"iota:*\"", "matches no opcode"},
           {"opcode = \"tensor_tensor:*\"\nops = [\"sideways\"]", "ops entry 'sideways'"},
           {"opcode = \"tensor_reduce:*\"\nops = [\"divide\"]", "ops entry 'divide'"},
           {"opcode = \"memset\"\nops = [\"add\"]", "has no sub-op"},
       }) {
    const auto [text, line] = with_rule(good, body);
    auto hw = parse_hardware(text, "bad.toml");
    ASSERT_FALSE(hw) << "accepted: " << body;
    EXPECT_EQ(hw.error().code, "nkia_hardware_invalid") << hw.error().format();
    EXPECT_NE(hw.error().message.find(mentions), std::string::npos) << hw.error().format();
    EXPECT_NE(hw.error().message.find(index), std::string::npos) << hw.error().format();
    EXPECT_EQ(hw.error().loc.file, "bad.toml");
    EXPECT_EQ(hw.error().loc.line, line) << body;
  }
  // What patterns resolve to.
  for (const auto& [body, op, sub, match] : std::vector<std::tuple<std::string, Opcode, AluOp, bool>>{
           {"opcode = \"tensor_tensor:*\"", Opcode::kTensorTensor, BinaryOp::kAdd, true},
           {"opcode = \"tensor_tensor*\"", Opcode::kTensorTensorScan, BinaryOp::kAdd, true},
           {"opcode = \"tensor_tensor:*\"", Opcode::kTensorTensorScan, BinaryOp::kAdd, false},
           {"opcode = \"nc_matmul\"", Opcode::kNcMatmul, OpMode::kDoubleRow, false},
           {"opcode = \"nc_matmul\"", Opcode::kNcMatmul, AluOp(), true},
           {"opcode = \"nc_matmul:double_row\"", Opcode::kNcMatmul, OpMode::kDoubleRow, true},
           {"opcode = \"nc_matmul:double_row\"", Opcode::kNcMatmul, AluOp(), false},
           {"opcode = \"tensor_reduce:*\"\nops = [\"add\"]", Opcode::kTensorReduce, ReduceOp::kSum, true},
           {"opcode = \"tensor_reduce:*\"\nops = [\"add\"]", Opcode::kTensorReduce, ReduceOp::kMax, false},
           {"engine = \"vector\"\nopcode = \"*\"\nops = [\"exp\"]", Opcode::kTensorScalar, UnaryOp::kExp, true},
       }) {
    auto hw = parse_hardware(with_rule(good, body).first, "ok.toml");
    ASSERT_TRUE(hw) << body << ": " << hw.error().format();
    const CostRule& rule = hw->rules.back();
    const Engine e = (opcode_info(op).engines & kOnDve) ? Engine::kVector : Engine::kTensor;
    EXPECT_EQ(rule.matches(e, InstrOp(op, sub)), match) << body << " / " << instruction_text(InstrOp(op, sub));
  }
}

// The engines an opcode runs on whose cost comes from the engine's catch-all rule (opcode = "*")
// on some target, with the reason; the test fails when such an opcode gets a rule of its own, so
// that its entry goes.
const std::map<std::pair<Opcode, Engine>, const char*>& catch_all_priced() {
  static const std::map<std::pair<Opcode, Engine>, const char*> kList = {
      {{Opcode::kMemset, Engine::kScalar}, "spec §4.3 gives no memset cost on ACT: priced as an activation"},
      {{Opcode::kTensorCopy, Engine::kScalar}, "spec §4.3 gives no copy cost on ACT: priced as an activation"},
      {{Opcode::kTensorCopy, Engine::kVector}, "trn1: a single-input DVE instruction, max(MIN_II, N) (spec §4.4)"},
      {{Opcode::kNcTranspose, Engine::kVector}, "a 32x32 DVE transpose: a single-input DVE instruction (spec §4.4)"},
      {{Opcode::kBnStats, Engine::kVector}, "no cost in the spec yet: a single-input DVE instruction"},
      {{Opcode::kMatchReplace8, Engine::kVector}, "no cost in the spec yet: the DVE catch-all"},
      {{Opcode::kStreamShuffle, Engine::kVector}, "no cost in the spec yet: the DVE catch-all"},
      {{Opcode::kRangeSelect, Engine::kVector}, "no cost in the spec yet: the DVE catch-all"},
      {{Opcode::kSelectReduce, Engine::kVector}, "no cost in the spec yet: the DVE catch-all"},
      {{Opcode::kTensorPartitionReduce, Engine::kGpSimd}, "POOL instructions: GPSIMD_START + N (spec §4.5)"},
      {{Opcode::kGatherFlattened, Engine::kGpSimd}, "POOL instructions: GPSIMD_START + N (spec §4.5)"},
      {{Opcode::kLocalGather, Engine::kGpSimd}, "POOL instructions: GPSIMD_START + N (spec §4.5)"},
      {{Opcode::kSequenceBounds, Engine::kGpSimd}, "no cost in the spec (§4.5: n/a): POOL's GPSIMD_START + N"},
      {{Opcode::kNonzeroWithCount, Engine::kGpSimd}, "no cost in the spec: POOL's GPSIMD_START + N"},
      {{Opcode::kRng, Engine::kVector}, "no cost in the spec: the DVE catch-all, one element per cycle"},
      {{Opcode::kRng, Engine::kGpSimd}, "no cost in the spec: POOL's GPSIMD_START + N"},
      {{Opcode::kDropout, Engine::kVector}, "no cost in the spec: the DVE catch-all, one element per cycle"},
      {{Opcode::kTensorScalarCumulative, Engine::kVector}, "no cost in the spec: the DVE catch-all, as a scan"},
      {{Opcode::kSetRngSeed, Engine::kVector}, "no cost in the spec: the DVE catch-all (one element)"},
      {{Opcode::kNcMatmulMx, Engine::kTensor}, "NeuronCore-v4 only: trn3 prices it; older targets refuse it"},
      {{Opcode::kQuantizeMx, Engine::kVector}, "NeuronCore-v4 only: trn3 prices it; older targets refuse it"},
  };
  return kList;
}

TEST(CostHardware, EveryOpcodeHasARuleOfItsOwnOnEveryTarget) {
  std::set<std::pair<Opcode, Engine>> used;
  for (const std::string& target : target_names()) {
    auto hw = hardware_for_target(target);
    ASSERT_TRUE(hw) << hw.error().format();
    for (const OpcodeInfo& row : kOpcodeTable)
      for (int e = 0; e < kNumEngines; ++e) {
        const Engine engine = static_cast<Engine>(e);
        // DMA queues are priced by the [dma] model (bandwidth, descriptors), not by rules.
        if (!(row.engines & engine_bit(engine)) || engine == Engine::kDma) continue;
        bool own = false;
        for (const CostRule& r : hw->rules)
          own = own ||
                (r.opcode != "*" && r.opcodes[static_cast<size_t>(row.opcode)] && (!r.engine || *r.engine == engine));
        if (own) continue;
        const auto it = catch_all_priced().find({row.opcode, engine});
        EXPECT_TRUE(it != catch_all_priced().end()) << target << ": " << row.name << " on the " << engine_name(engine)
                                                    << " engine has no cost rule of its own; add one to data/targets/"
                                                    << target << ".toml or a reason to catch_all_priced()";
        used.insert({row.opcode, engine});
      }
  }
  for (const auto& [key, reason] : catch_all_priced())
    EXPECT_TRUE(used.count(key)) << opcode_name(key.first) << " on " << engine_name(key.second)
                                 << " has a rule of its own on every target now: drop its entry (" << reason << ")";
}

TEST(CostHardware, FilesLoadAndMissingFilesAreDiagnostics) {
  auto missing = load_hardware_file("/nonexistent/hw.toml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "nkia_hardware_unreadable");

  const std::string path = testing::TempDir() + "/custom_trn1.toml";
  {
    std::ofstream f(path);
    f << with(std::string(target_text("trn1")), "name = \"trn1\"", "name = \"trn1-fast-dma\"");
  }
  auto hw = load_hardware_file(path);
  ASSERT_TRUE(hw) << hw.error().format();
  EXPECT_EQ(hw->target.name, "trn1-fast-dma");
  EXPECT_EQ(hw->origin, path);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nki_agent
