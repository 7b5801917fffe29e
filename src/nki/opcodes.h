// nki/opcodes.h — the one table of the instructions the simulator executes, and of the engines that
// run them. Each row names an opcode as traces, profiles and cost rules spell it, the engines it
// may run on, the operators that qualify it (its sub-ops: tensor_tensor's ALU operator,
// activation's function, nc_matmul's mode...), what it reads and writes, and its entry in the
// agent's API docs (data/docs/api.toml). Every other file takes an opcode's name from here: a new
// instruction is a new row, and a table that misses a row does not compile.
//
// An instruction's text form is its name, then ':' and its first sub-op, then the opcode's
// separator and its second: "dma_copy", "dma_copy:add", "activation:exp", "nc_matmul:double_row",
// "tensor_scalar:multiply,add", "tensor_tensor_scan:add:multiply". That text is what every output
// shows (trace JSON, the trace's wire form, profiles, Perfetto); parse_instruction() reads it back.
//
// Pure data and its lookups: nothing here executes, checks or prices an instruction.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tensor/ops.h"

namespace nki_agent {

// The NeuronCore's engines, and the DMA queues that move data between memories.
enum class Engine : uint8_t { kTensor, kVector, kScalar, kGpSimd, kDma };
inline constexpr int kNumEngines = 5;
// "tensor" (PE), "vector" (DVE), "scalar" (ACT), "gpsimd" (POOL), "dma".
std::string_view engine_name(Engine e);
// The names above, and the hardware names pe, dve, act and pool.
std::optional<Engine> engine_from_name(std::string_view name);

// Instruction modes that are neither an ALU operator nor a function.
enum class OpMode : uint8_t {
  kCopy,       // activation with no function (nl.copy): the identity
  kDoubleRow,  // nc_matmul(perf_mode=double_row)
};
inline constexpr int kNumOpModes = static_cast<int>(OpMode::kDoubleRow) + 1;  // keep with the last enumerator
std::string_view op_mode_name(OpMode m);
std::optional<OpMode> op_mode_from_name(std::string_view name);

// One operator qualifying an instruction: an ALU operator, an activation (unary) function, a
// reduction or a mode; kNone where the instruction has none in that place.
struct AluOp {
  enum class Kind : uint8_t { kNone, kBinary, kUnary, kReduce, kMode };
  Kind kind = Kind::kNone;
  uint8_t code = 0;  // the BinaryOp, UnaryOp, ReduceOp or OpMode

  constexpr AluOp() = default;
  constexpr AluOp(BinaryOp op) : kind(Kind::kBinary), code(static_cast<uint8_t>(op)) {}
  constexpr AluOp(UnaryOp op) : kind(Kind::kUnary), code(static_cast<uint8_t>(op)) {}
  constexpr AluOp(ReduceOp op) : kind(Kind::kReduce), code(static_cast<uint8_t>(op)) {}
  constexpr AluOp(OpMode m) : kind(Kind::kMode), code(static_cast<uint8_t>(m)) {}
  constexpr bool none() const { return kind == Kind::kNone; }
  constexpr bool operator==(const AluOp&) const = default;
};
std::string_view alu_op_name(AluOp op);  // "" for none

// Bits of AluOp kinds an opcode's sub-ops may take.
inline constexpr uint8_t kSubBinary = 1, kSubUnary = 2, kSubReduce = 4, kSubMode = 8;
// Bits of the engines an opcode may run on.
inline constexpr uint8_t engine_bit(Engine e) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(e));
}
inline constexpr uint8_t kOnPe = 1, kOnDve = 2, kOnAct = 4, kOnPool = 8, kOnDma = 16;

// The table. Columns: enumerator, name, engines, sub-ops (fewest, most, kinds, separator before the
// second), what it reads and writes, its docs key (data/docs/api.toml).
#define NKIA_OPCODES(X)                                                                                                \
  X(kDmaCopy, "dma_copy", kOnDma, 0, 1, kSubBinary, ':', "dst <- src; dma_copy:add also reads dst (dst += src)",       \
    "nisa.dma_copy")                                                                                                   \
  X(kDmaTranspose, "dma_transpose", kOnDma, 0, 0, 0, ':', "dst <- src with its axes permuted, or rows gathered",       \
    "nisa.dma_transpose")                                                                                              \
  X(kTensorTensor, "tensor_tensor", kOnDve, 1, 1, kSubBinary, ':', "dst = data1 op data2, elementwise",                \
    "nisa.tensor_tensor")                                                                                              \
  X(kTensorScalar, "tensor_scalar", kOnDve, 1, 2, kSubBinary | kSubUnary, ',',                                         \
    "dst = (data op0 operand0) op1 operand1; operands numbers or [P, 1] tiles", "nisa.tensor_scalar")                  \
  X(kScalarTensorTensor, "scalar_tensor_tensor", kOnDve, 2, 2, kSubBinary, ':',                                        \
    "dst = (data op0 operand0) op1 data1; operand0 a number or a [P, 1] tile", "nisa.scalar_tensor_tensor")            \
  X(kReciprocal, "reciprocal", kOnDve, 0, 0, 0, ':', "dst = 1 / data, elementwise", "nisa.reciprocal")                 \
  X(kIota, "iota", kOnPool, 0, 0, 0, ':', "dst = an affine expression of the indices; reads nothing", "nisa.iota")     \
  X(kAffineSelect, "affine_select", kOnPool, 0, 0, 0, ':', "dst = on_true where an affine predicate holds",            \
    "nisa.affine_select")                                                                                              \
  X(kActivation, "activation", kOnAct, 1, 1, kSubUnary | kSubMode, ':',                                                \
    "dst = f(data * scale + bias), optionally also reduced per partition", "nisa.activation")                          \
  X(kNcMatmul, "nc_matmul", kOnPe, 0, 1, kSubMode, ':', "psum dst (+)= stationary.T @ moving", "nisa.nc_matmul")       \
  X(kNcTranspose, "nc_transpose", kOnPe | kOnDve, 0, 0, 0, ':', "dst = src.T", "nisa.nc_transpose")                    \
  X(kTensorReduce, "tensor_reduce", kOnDve, 1, 1, kSubReduce, ':', "dst = src reduced over free axes",                 \
    "nisa.tensor_reduce")                                                                                              \
  X(kTensorTensorScan, "tensor_tensor_scan", kOnDve, 2, 2, kSubBinary, ':',                                            \
    "dst[:, i] = (dst[:, i-1] op0 data0[:, i]) op1 data1[:, i]", "nisa.tensor_tensor_scan")                            \
  X(kBnStats, "bn_stats", kOnDve, 0, 0, 0, ':', "dst = (count, mean, M2) per partition of src", "nisa.bn_stats")       \
  X(kBnAggr, "bn_aggr", kOnDve, 0, 0, 0, ':', "dst = mean and variance from bn_stats triples", "nisa.bn_aggr")         \
  X(kMemset, "memset", kOnDve | kOnAct | kOnPool, 0, 0, 0, ':', "dst = a constant; reads nothing", "nisa.memset")      \
  X(kTensorCopy, "tensor_copy", kOnDve | kOnAct | kOnPool, 0, 0, 0, ':', "dst = src", "nisa.tensor_copy")              \
  X(kMax8, "max8", kOnDve, 0, 0, 0, ':', "dst = the 8 largest values per partition of src", "nisa.max8")               \
  X(kFindIndex8, "nc_find_index8", kOnDve, 0, 0, 0, ':', "dst = where each of 8 values first occurs per partition",    \
    "nisa.nc_find_index8")                                                                                             \
  X(kMatchReplace8, "nc_match_replace8", kOnDve, 0, 0, 0, ':',                                                         \
    "dst = data with the first match of each of 8 values replaced", "nisa.nc_match_replace8")                          \
  X(kStreamShuffle, "nc_stream_shuffle", kOnDve, 0, 0, 0, ':', "dst partition i = src partition mask[i % 32]",         \
    "nisa.nc_stream_shuffle")                                                                                          \
  X(kRangeSelect, "range_select", kOnDve, 0, 0, 0, ':', "dst = on_true inside [bound0, bound1], else a fill value",    \
    "nisa.range_select")                                                                                               \
  X(kSelectReduce, "select_reduce", kOnDve, 0, 0, 0, ':', "dst = on_true where predicate, else on_false; reduced",     \
    "nisa.select_reduce")                                                                                              \
  X(kTensorCopyPredicated, "tensor_copy_predicated", kOnDve, 0, 0, 0, ':', "dst = src where predicate, else dst",      \
    "nisa.tensor_copy_predicated")                                                                                     \
  X(kTensorPartitionReduce, "tensor_partition_reduce", kOnPool, 1, 1, kSubBinary, ':',                                 \
    "dst[1, F] = data reduced over its partitions", "nisa.tensor_partition_reduce")                                    \
  X(kGatherFlattened, "gather_flattened", kOnPool, 0, 0, 0, ':', "dst = data's free elements at indices",              \
    "nl.gather_flattened")                                                                                             \
  X(kLocalGather, "local_gather", kOnPool, 0, 0, 0, ':', "dst = src elements at per-group indices",                    \
    "nisa.local_gather")                                                                                               \
  X(kSequenceBounds, "sequence_bounds", kOnPool, 0, 0, 0, ':', "dst[1, 2, F] = segment runs' starts and ends",         \
    "nisa.sequence_bounds")                                                                                            \
  X(kNonzeroWithCount, "nonzero_with_count", kOnPool, 0, 0, 0, ':',                                                    \
    "dst[p, :T + 1] = the nonzero positions of src[p], padding, their count (p = 0, 16, ..., 112)",                    \
    "nisa.nonzero_with_count")                                                                                         \
  X(kRng, "rng", kOnDve | kOnPool, 0, 0, 0, ':', "dst = random bits (nl.rand: uniform [0, 1)); reads nothing",         \
    "nisa.rng")                                                                                                        \
  X(kDropout, "dropout", kOnDve, 0, 0, 0, ':', "dst = data, or 0 where a uniform draw falls below prob",               \
    "nisa.dropout")                                                                                                    \
  X(kTensorScalarCumulative, "tensor_scalar_cumulative", kOnDve, 2, 2, kSubBinary, ':',                                \
    "dst[:, i] = reg = op1(data[:, i] op0 imm0, reg), reg per partition", "nisa.tensor_scalar_cumulative")             \
  X(kSetRngSeed, "set_rng_seed", kOnDve, 0, 0, 0, ':', "the random-number state = a [1, 1] seed tile; writes no tile", \
    "nisa.set_rng_seed")                                                                                               \
  X(kNcMatmulMx, "nc_matmul_mx", kOnPe, 0, 0, 0, ':',                                                                  \
    "psum dst (+)= dequant(stationary).T @ dequant(moving); x4 operands, K = 4 x partitions, E8M0 scales",             \
    "nisa.nc_matmul_mx")                                                                                               \
  X(kQuantizeMx, "quantize_mx", kOnDve, 0, 0, 0, ':',                                                                  \
    "dst (x4) and dst_scale = src quantized per 32-value group (8 partitions x 4), OCP MXFP8", "nisa.quantize_mx")

enum class Opcode : uint8_t {
#define NKIA_OPCODE_ENUM(e, ...) e,
  NKIA_OPCODES(NKIA_OPCODE_ENUM)
#undef NKIA_OPCODE_ENUM
};

struct OpcodeInfo {
  Opcode opcode;
  const char* name;  // as traces and cost rules spell it
  uint8_t engines;   // engine_bit()s
  uint8_t min_sub, max_sub;
  uint8_t sub_kinds;  // kSub* bits
  char separator;     // between the first and the second sub-op
  const char* flow;   // what it reads and writes
  const char* docs_key;
};

inline constexpr OpcodeInfo kOpcodeTable[] = {
#define NKIA_OPCODE_ROW(e, name, engines, lo, hi, kinds, sep, flow, docs) \
  {Opcode::e, name, engines, lo, hi, kinds, sep, flow, docs},
    NKIA_OPCODES(NKIA_OPCODE_ROW)
#undef NKIA_OPCODE_ROW
};
inline constexpr int kNumOpcodes = static_cast<int>(std::size(kOpcodeTable));

namespace opcodes_detail {
constexpr bool rows_in_order() {
  for (int i = 0; i < kNumOpcodes; ++i)
    if (static_cast<int>(kOpcodeTable[i].opcode) != i) return false;
  return true;
}
}  // namespace opcodes_detail
static_assert(opcodes_detail::rows_in_order(), "kOpcodeTable rows follow the Opcode enumerators");

constexpr const OpcodeInfo& opcode_info(Opcode op) {
  return kOpcodeTable[static_cast<int>(op)];
}
constexpr const char* opcode_name(Opcode op) {
  return opcode_info(op).name;
}
std::optional<Opcode> opcode_from_name(std::string_view name);

// What an instruction does: its opcode and the (up to two) operators that qualify it.
struct InstrOp {
  Opcode opcode = Opcode::kTensorCopy;
  std::array<AluOp, 2> sub{};

  constexpr InstrOp() = default;
  constexpr InstrOp(Opcode op, AluOp first = {}, AluOp second = {}) : opcode(op), sub{first, second} {}
  constexpr bool operator==(const InstrOp&) const = default;
  // A number unique to the (opcode, sub-ops) combination, for maps.
  constexpr uint32_t key() const {
    return static_cast<uint32_t>(opcode) << 24 | static_cast<uint32_t>(sub[0].kind) << 20 |
           static_cast<uint32_t>(sub[0].code) << 12 | static_cast<uint32_t>(sub[1].kind) << 8 | sub[1].code;
  }
};

// The text form ("tensor_tensor:add").
std::string instruction_text(const InstrOp& op);
// Reads a text form back; nullopt for an unknown opcode or sub-ops the opcode does not take.
std::optional<InstrOp> parse_instruction(std::string_view text);

}  // namespace nki_agent
