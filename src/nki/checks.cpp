#include "nki/checks.h"

#include <fmt/format.h>

namespace nki_agent {

Diagnostic nki_error(std::string code, std::string message, std::string hint) {
  return Diagnostic::error(std::move(code), std::move(message), std::move(hint));
}

Result<void> check_on_chip(const Access& a, const char* instruction) {
  if (buffer_is_on_chip(a.buffer())) return {};
  return fail(nki_error("err_unsupported_memory",
                        fmt::format("'{}' needs its operand {} in SBUF or PSUM, but it is in {}", instruction,
                                    a.describe(), buffer_name(a.buffer())),
                        "load HBM data into an SBUF tile first (nl.load, or nisa.dma_copy into an nl.sbuf tile)"));
}

Result<void> check_partition_limit(const ExecContext& ctx, const Access& a, const char* instruction) {
  if (!buffer_is_on_chip(a.buffer()) || a.partitions() <= ctx.target->partitions) return {};
  return fail(nki_error("err_num_partition_exceed_arch_limit",
                        fmt::format("number of partitions {} of {} in '{}' exceeds the architecture limit of {}",
                                    a.partitions(), a.describe(), instruction, ctx.target->partitions),
                        fmt::format("tile the partition dimension in blocks of at most {} (nl.tile_size.pmax)",
                                    ctx.target->partitions)));
}

Result<void> check_tiles(const ExecContext& ctx, std::initializer_list<const Access*> tiles, const char* instruction) {
  for (const Access* t : tiles) {
    if (auto r = check_on_chip(*t, instruction); !r) return r;
    if (auto r = check_partition_limit(ctx, *t, instruction); !r) return r;
  }
  return {};
}

Result<void> check_same_partitions(const Access& a, const Access& b, const char* instruction) {
  if (a.partitions() == b.partitions()) return {};
  return fail(nki_error("err_num_partition_mismatch",
                        fmt::format("number of partitions (dimension 0) differs between {} and {} in '{}'",
                                    a.describe(), b.describe(), instruction),
                        "give both operands the same partition count, e.g. broadcast a [1, F] tile with "
                        ".broadcast_to or load it onto every partition"));
}

InstructionRecord instruction_record(Engine e, std::string opcode, const SourceLoc& loc, const Access& dst,
                                     std::initializer_list<const Access*> srcs) {
  InstructionRecord r;
  r.engine = e;
  r.opcode = std::move(opcode);
  r.loc = loc;
  r.elements = dst.view.numel();
  r.operands.push_back(record_operand(dst, true));
  for (const Access* s : srcs) r.operands.push_back(record_operand(*s, false));
  return r;
}

}  // namespace nki_agent
