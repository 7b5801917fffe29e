// The opcode table's lookups (nki/opcodes.h): names of engines, modes and opcodes both ways, and
// an instruction's text form both ways.
#include "nki/opcodes.h"

#include <iterator>

namespace nki_agent {

namespace {

constexpr std::string_view kEngineNames[] = {"tensor", "vector", "scalar", "gpsimd", "dma"};
static_assert(std::size(kEngineNames) == kNumEngines, "every Engine has a name");
// The hardware's own names for the compute engines.
constexpr std::string_view kEngineAliases[] = {"pe", "dve", "act", "pool"};

constexpr std::string_view kModeNames[] = {"copy", "double_row"};
static_assert(std::size(kModeNames) == kNumOpModes, "every OpMode has a name");

// One sub-op of `info` from its text: the kinds the opcode takes, tried in a fixed order (the
// names of binary operators, functions, reductions and modes do not overlap).
std::optional<AluOp> parse_sub(const OpcodeInfo& info, std::string_view text) {
  if (info.sub_kinds & kSubBinary)
    if (auto op = binary_op_from_name(text)) return AluOp(*op);
  if (info.sub_kinds & kSubUnary)
    if (auto op = unary_op_from_name(text)) return AluOp(*op);
  if (info.sub_kinds & kSubReduce)
    if (auto op = reduce_op_from_name(text); op && reduce_op_name(*op) == text) return AluOp(*op);
  if (info.sub_kinds & kSubMode)
    if (auto m = op_mode_from_name(text)) return AluOp(*m);
  return std::nullopt;
}

}  // namespace

std::string_view engine_name(Engine e) {
  const auto i = static_cast<size_t>(e);
  return i < std::size(kEngineNames) ? kEngineNames[i] : "?";
}

std::optional<Engine> engine_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kEngineNames); ++i)
    if (kEngineNames[i] == name) return static_cast<Engine>(i);
  for (size_t i = 0; i < std::size(kEngineAliases); ++i)
    if (kEngineAliases[i] == name) return static_cast<Engine>(i);
  return std::nullopt;
}

std::string_view op_mode_name(OpMode m) {
  return kModeNames[static_cast<int>(m)];
}

std::optional<OpMode> op_mode_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kModeNames); ++i)
    if (kModeNames[i] == name) return static_cast<OpMode>(i);
  return std::nullopt;
}

std::string_view alu_op_name(AluOp op) {
  switch (op.kind) {
    case AluOp::Kind::kNone: return {};
    case AluOp::Kind::kBinary: return binary_op_name(static_cast<BinaryOp>(op.code));
    case AluOp::Kind::kUnary: return unary_op_name(static_cast<UnaryOp>(op.code));
    case AluOp::Kind::kReduce: return reduce_op_name(static_cast<ReduceOp>(op.code));
    case AluOp::Kind::kMode: return op_mode_name(static_cast<OpMode>(op.code));
  }
  return {};
}

std::optional<Opcode> opcode_from_name(std::string_view name) {
  for (const OpcodeInfo& row : kOpcodeTable)
    if (row.name == name) return row.opcode;
  return std::nullopt;
}

std::string instruction_text(const InstrOp& op) {
  const OpcodeInfo& info = opcode_info(op.opcode);
  std::string s = info.name;
  if (!op.sub[0].none()) {
    s += ':';
    s += alu_op_name(op.sub[0]);
    if (!op.sub[1].none()) {
      s += info.separator;
      s += alu_op_name(op.sub[1]);
    }
  }
  return s;
}

std::optional<InstrOp> parse_instruction(std::string_view text) {
  const size_t colon = text.find(':');
  const auto opcode = opcode_from_name(text.substr(0, colon));
  if (!opcode) return std::nullopt;
  const OpcodeInfo& info = opcode_info(*opcode);
  InstrOp out(*opcode);
  int n = 0;
  if (colon != std::string_view::npos) {
    std::string_view rest = text.substr(colon + 1);
    const size_t sep = rest.find(info.separator);
    const std::string_view first = rest.substr(0, sep);
    auto a = parse_sub(info, first);
    if (!a) return std::nullopt;
    out.sub[0] = *a;
    n = 1;
    if (sep != std::string_view::npos) {
      auto b = parse_sub(info, rest.substr(sep + 1));
      if (!b) return std::nullopt;
      out.sub[1] = *b;
      n = 2;
    }
  }
  if (n < info.min_sub || n > info.max_sub) return std::nullopt;
  return out;
}

}  // namespace nki_agent
