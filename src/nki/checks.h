// nki/checks.h — the compiler's operand rules shared by the instructions (nki-spec §2.3, §2.5,
// §5.3), each failing with its NKI catalogue code and a hint a kernel author can act on.
#pragma once

#include <initializer_list>
#include <string>

#include "core/diagnostic.h"
#include "nki/isa.h"

namespace nki_agent {

Diagnostic nki_error(std::string code, std::string message, std::string hint);

// err_unsupported_memory unless the operand is in SBUF or PSUM.
Result<void> check_on_chip(const Access& a, const char* instruction);
// err_num_partition_exceed_arch_limit when an on-chip operand spans more than pmax partitions.
Result<void> check_partition_limit(const ExecContext& ctx, const Access& a, const char* instruction);
// Both of the above for each operand, in order: what every compute instruction asks of its tiles.
Result<void> check_tiles(const ExecContext& ctx, std::initializer_list<const Access*> tiles, const char* instruction);
// err_num_partition_mismatch when two on-chip operands span different partition counts.
Result<void> check_same_partitions(const Access& a, const Access& b, const char* instruction);

// The trace record of an instruction writing dst from srcs; it processes dst's elements.
InstructionRecord instruction_record(Engine e, std::string opcode, const SourceLoc& loc, const Access& dst,
                                     std::initializer_list<const Access*> srcs);

}  // namespace nki_agent
