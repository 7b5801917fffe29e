// cost/hardware.h — a NeuronCore as the cost model sees it: clocks, per-instruction cost rules,
// DMA engines and queues, SBUF/PSUM geometry, concurrency limits. Pure data, read from one TOML
// file per target (data/targets/trn1.toml, trn2.toml, compiled into the binary; any other file
// can be given at run time). Every number in those files names its source (docs/cost-model.md).
//
// The model that evaluates these numbers lives in the other cost/ files; nothing here knows
// about traces or time.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "nki/target.h"
#include "nki/trace.h"

namespace nki_agent {

// The compute engines the cost model schedules (Engine without kDma), indexed by Engine.
inline constexpr int kNumComputeEngines = 4;

struct EngineSpec {
  double clock_ghz = 1.0;
  // Extra cycles when an instruction reads the output of the instruction just before it on the same
  // engine (the pipeline drains: nki-spec §6.3).
  double dependency_overhead_cycles = 0;
  // Cycles every instruction spends setting up each SBUF/PSUM operand it reads or writes (nki-spec
  // §6.3: ~60 per access, partly hidden by pipelining), on top of its rule's cost.
  double access_overhead_cycles = 0;
  // Cost multiplier when an operand's minor stride exceeds strided_threshold_bytes (NCv2).
  double strided_factor = 1.0;
  int64_t strided_threshold_bytes = 16;
  // TensorE only.
  int pe_rows = 128, pe_cols = 128;
  double throttle_idle_ns = 0;  // 0: no throttling; else an idle gap this long re-engages it
  double throttle_ramp_ns = 0;  // PE busy time the ramp from throttle_start_utilization to 100% lasts
  double throttle_start_utilization = 1.0;
};

// One instruction cost rule; the first rule whose conditions all hold gives the cost.
//
// The opcode pattern is matched against the instructions' text forms (nki/opcodes.h): "*" (any),
// "name" (exactly, without sub-ops), "name:sub" (exactly), "prefix*" (names starting with prefix,
// any sub-ops) or "name:*" (that opcode with sub-ops). parse_hardware resolves it, and `ops`, to
// the opcode table once: a rule that can match no opcode on its engine, or an `ops` entry that
// names no operator of the opcodes it matches, is a load error.
struct CostRule {
  enum class Model : uint8_t { kElementwise, kMatmul, kPeTranspose };
  // How the instruction's sub-ops must look for the pattern to match.
  enum class SubMatch : uint8_t { kAny, kNone, kSome, kExact };
  std::optional<Engine> engine;             // none: any engine
  std::string opcode;                       // the pattern, as written
  std::array<bool, kNumOpcodes> opcodes{};  // the opcodes the pattern matches (on `engine`)
  SubMatch sub_match = SubMatch::kAny;
  InstrOp exact;  // kExact: the instruction "name:sub" names
  // Conditions (unset: not checked).
  std::vector<std::string> ops;                // the instruction's first sub-op is one of these...
  std::vector<AluOp> op_set;                   // ...as resolved: the operators those names are
  std::vector<DType> dtypes;                   // every operand's dtype is one of these
  std::optional<bool> all_sbuf;                // every operand is in SBUF
  std::optional<bool> mixed_psum_sbuf_inputs;  // the inputs come from both PSUM and SBUF
  std::optional<bool> unit_stride;             // every operand's minor stride is 1 (or its minor size is 1)
  // Cost in engine cycles.
  Model model = Model::kElementwise;
  double fixed = 0, per_element = 1, min_cycles = 0, extra = 0;
  double init = 64, fp32_factor = 4;  // kMatmul
  std::string source;                 // where the formula comes from
  int line = 0;                       // the rule's line in its file

  // The opcode, sub-op and `ops` conditions (the operand conditions are the cost model's).
  bool matches(Engine e, const InstrOp& op) const;
};

struct DmaSpec {
  int engines = 16;
  int partitions_per_engine = 8;
  double bytes_per_ns = 17;  // per engine, peak
  double efficiency = 1.0;   // sustained fraction of the peak on contiguous HBM access
  // Each engine's share of a transfer costs transfer_overhead_ns, plus descriptor_overhead_ns per
  // DMA buffer (a contiguous run; the HBM side's runs merge across partitions when they touch, the
  // on-chip side has one per partition at least), plus its bytes at the engine's rate.
  double descriptor_overhead_ns = 0;
  double transfer_overhead_ns = 0;
  int64_t min_descriptor_bytes = 64;
  // HBM runs that do not touch (a gather or scatter at a pitch) move at
  // min(1, (gather_pitch_ref_bytes / pitch) ^ gather_pitch_exponent) of the rate; 0: no penalty.
  double gather_pitch_ref_bytes = 0;
  double gather_pitch_exponent = 0;
  double trigger_latency_ns = 1300;
  int max_inflight_per_queue = 4;  // 0: unlimited
  double transpose_efficiency = 1.0;
  double compute_efficiency = 1.0;  // DMAs that accumulate into their destination (dst_rmw_op)

  double engine_bytes_per_ns() const { return bytes_per_ns * efficiency; }
};

// Engines that may not use one memory at the same time (NCv2: DVE and POOL on SBUF, DVE and ACT
// on PSUM); the compiler serialises them.
struct ConcurrencyGroup {
  Buffer memory = Buffer::kSbuf;  // kSbuf or kPsum
  std::vector<Engine> engines;
  std::string source;
};

// A parameter `nki-agent calibrate` may fit ([[calibrate]] in the target file): the dotted key of a
// number in the same file, its physical range, and why it is free.
struct FreeParameter {
  std::string key;  // e.g. "dma.descriptor_overhead_ns", "engines.scalar.access_overhead_cycles"
  double min = 0, max = 0;
  std::string source;
  int line = 0;
};

struct HardwareSpec {
  TargetSpec target;            // [target] and [limits]: the name, the core, SBUF and PSUM capacities
  std::string origin;           // "embedded data/targets/trn1.toml" or the file it was read from
  double hbm_bytes_per_ns = 0;  // per NeuronCore: MBU and the roofline's memory bound
  double semaphore_latency_ns = 0;
  double launch_overhead_ns = 0;                         // a launch's fixed cost: nothing starts before it
  std::array<EngineSpec, kNumComputeEngines> engines{};  // indexed by Engine (kTensor..kGpSimd)
  DmaSpec dma;
  std::vector<ConcurrencyGroup> concurrency;
  std::vector<CostRule> rules;
  std::vector<FreeParameter> free_parameters;  // [[calibrate]], in file order

  const EngineSpec& engine(Engine e) const { return engines[static_cast<size_t>(e)]; }
  // Dense BF16 TensorE peak: 2 flops per PE per cycle.
  double pe_peak_flops_per_ns() const {
    const EngineSpec& pe = engine(Engine::kTensor);
    return 2.0 * pe.pe_rows * pe.pe_cols * pe.clock_ghz;
  }
  double dma_peak_bytes_per_ns() const { return dma.engines * dma.bytes_per_ns; }
};

// Parses a hardware description; `origin` names it in Diagnostics. Codes: nkia_hardware_syntax (not
// TOML), nkia_hardware_invalid (a missing, mistyped or absurd field, or a rule that matches no
// opcode; the message names it, and the Diagnostic's location is its line).
Result<HardwareSpec> parse_hardware(std::string_view toml_text, std::string_view origin);
// Reads and parses a file. Code nkia_hardware_unreadable too.
Result<HardwareSpec> load_hardware_file(const std::string& path);
// The text of a description file, as load_hardware_file reads it (codes nkia_hardware_unreadable,
// nkia_hardware_invalid when over 8 MiB): for a caller that also keys something by the text.
Result<std::string> read_hardware_file(const std::string& path);
// The description compiled in for a target ("trn1", "trn2"). Code nkia_unknown_target.
Result<HardwareSpec> hardware_for_target(std::string_view target);

}  // namespace nki_agent
