// nki/checks.h — the compiler's operand rules shared by the instructions (nki-spec §2.3, §2.5,
// §5.3), each failing with its NKI catalogue code and a hint a kernel author can act on.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "nki/error_catalogue.h"  // nki_error: the constructor of every Diagnostic below
#include "nki/isa.h"

namespace nki_agent {

// err_unsupported_memory unless the operand is in SBUF or PSUM.
Result<void> check_on_chip(const Access& a, const char* instruction);
// err_num_partition_exceed_arch_limit when an on-chip operand spans more than pmax partitions.
Result<void> check_partition_limit(const ExecContext& ctx, const Access& a, const char* instruction);
// The access-pattern rules of compute engines for an on-chip operand (nki-spec §2.5):
// nkia_partition_not_contiguous when it steps over partitions, nkia_partition_start_alignment when it
// starts where its partition count does not allow (more than 64: 0; 33-64: 0 or 64; up to 32: a
// multiple of 32). Broadcast views (partition stride 0) are not checked.
Result<void> check_partition_access(const Access& a, const char* instruction);
// err_unsupported_memory for a PSUM operand of a GpSimd instruction (POOL cannot access PSUM, §2.1).
Result<void> check_engine_memory(const Access& a, Engine engine, const char* instruction);
// err_unsupported_memory for a matmul input outside SBUF (the Tensor engine reads SBUF only, §2.1).
Result<void> check_matmul_inputs_in_sbuf(const Access& stationary, const Access& moving, const char* instruction);
// nkia_feature_not_on_target when the target's NeuronCore is older than `core_version`; `hint`
// names what to do instead.
Result<void> check_core_version(const ExecContext& ctx, int core_version, const char* instruction,
                                std::string_view hint);
// err_size_of_dimension_exceed_arch_limit when an operand of a Vector or Scalar engine instruction
// has more elements per partition than the target's engine_fmax_sbuf (SBUF) or engine_fmax_psum
// (PSUM): 64K and 4K on trn1 and trn2 (§2.5).
Result<void> check_free_size(const ExecContext& ctx, const Access& a, Engine engine, const char* instruction);
// All of the above for each operand of an instruction on `engine`, in order: what every compute
// instruction asks of its tiles.
Result<void> check_tiles(const ExecContext& ctx, std::initializer_list<const Access*> tiles, const char* instruction,
                         Engine engine = Engine::kVector);
// err_num_partition_mismatch when two on-chip operands span different partition counts.
Result<void> check_same_partitions(const Access& a, const Access& b, const char* instruction);

// The busiest moment of a set of live spans (each from its first access to its last, bytes per
// partition): the most bytes live at once, and the first span (in instruction order) whose start took
// the total over `capacity`, null when it never went over.
struct LivePeak {
  int64_t peak_bytes = 0;
  int64_t peak_tensors = 0;
  const LiveRange* over = nullptr;
  int64_t over_bytes = 0;    // bytes live once `over` began
  int64_t over_tensors = 0;  // tensors live once `over` began, `over` included
};
LivePeak live_peak(const std::vector<std::shared_ptr<LiveRange>>& ranges, int64_t capacity);

// nkia_psum_capacity_exceeded when, at some instruction, the PSUM tensors live across it (each from
// its first access to its last: the least any allocation must give it) need more than the target's
// PSUM bytes per partition. The Diagnostic is located where the tensor that goes over was allocated.
// Bytes are counted exactly, not rounded to banks, so a kernel the compiler could fit is never refused.
Result<void> check_psum_capacity(const ExecContext& ctx, const std::vector<std::shared_ptr<LiveRange>>& ranges);

// SBUF use over a launch, gathered from its spans as they stand now and then (the spans of one SPMD
// instance at a time; the launch drops spans that can overlap nothing to come).
struct SbufUse {
  int64_t peak_bytes = 0;
  int64_t peak_tensors = 0;
  bool over = false;   // some check went over the target's usable SBUF
  SourceLoc over_loc;  // where the tile that first went over was allocated
  int64_t over_tile_bytes = 0;
};
// Folds the spans' busiest moment into `use`.
void note_sbuf_use(SbufUse& use, const ExecContext& ctx, const std::vector<std::shared_ptr<LiveRange>>& ranges);
// The nkia_sbuf_capacity_exceeded warning for a launch whose live SBUF tiles needed more than the
// target's usable SBUF per partition, located at the allocation that first went over; nothing when
// they fit. A warning, not an error: the compiler spills rather than fails.
std::optional<Diagnostic> sbuf_capacity_warning(const ExecContext& ctx, const SbufUse& use);

// The trace record of an instruction writing dst from srcs; it processes dst's elements.
InstructionRecord instruction_record(Engine e, const InstrOp& op, const SourceLoc& loc, const Access& dst,
                                     std::span<const Access* const> srcs);

// The nkia_uninitialized_read warning (once per tensor) when `src` selects elements that nothing has
// written: a tensor nothing wrote at all, or an instruction whose results cannot be followed element
// by element (a gather, a shuffle) reading unwritten elements (nki/written.h).
void warn_unwritten_read(ExecContext& ctx, std::string_view opcode, const SourceLoc& loc, const Access& src);

// How an instruction's results depend on its operands, for the flow of unwritten data (nki/written.h).
enum class DataFlow : uint8_t {
  kElementwise,   // each result from the operands' elements at its position ([P, 1] operands broadcast)
  kPerPartition,  // each partition's results from all of the operands' elements in that partition
  kCombined,      // any result may take any operand element: unwritten ones are reported at once
  kCustom,        // the instruction sets its destination's flags itself (set_written)
};

// An instruction whose checks passed, as it issues: follows unwritten data from srcs into dst (and
// warns where it mixes into results) as `flow` says, and gives the trace record (without operands
// when ctx.trace is not recording). Every instruction goes through here, before it computes: it
// also settles the tensors the instruction reads (their poison and pending copies,
// nki/nki_tensor.h) and prepares dst for the write (before_write).
// `settle_reads` false leaves the reads to the instruction (read_view: a matmul reads pending
// copies in place).
InstructionRecord issue_instruction(ExecContext& ctx, Engine e, const InstrOp& op, const SourceLoc& loc,
                                    const Access& dst, std::span<const Access* const> srcs,
                                    DataFlow flow = DataFlow::kCombined, bool settle_reads = true);
inline InstructionRecord issue_instruction(ExecContext& ctx, Engine e, const InstrOp& op, const SourceLoc& loc,
                                           const Access& dst, std::initializer_list<const Access*> srcs,
                                           DataFlow flow = DataFlow::kCombined, bool settle_reads = true) {
  return issue_instruction(ctx, e, op, loc, dst, std::span<const Access* const>(srcs.begin(), srcs.size()), flow,
                           settle_reads);
}

// Stale data entered dst's values here: `opcode` combined unwritten elements of src with written
// ones into results now counted unwritten. The first such place is kept on dst's tensor and named
// when the values reach an output (nkia_uninitialized_read there).
void note_stale(const Access& dst, std::string_view opcode, const SourceLoc& loc, const Access& src);
// Values computed from stale ones are stale from the same place: dst takes the first origin of srcs.
void inherit_stale(const Access& dst, std::span<const Access* const> srcs);

// nkia_affine_range_carried_dependency, at the read, when iteration `ending_tag` (an
// ExecContext::affine_tag) of an nl.affine_range loop read on-chip elements that another iteration
// wrote and did not rewrite them itself (accumulating into a tensor is allowed; a running value
// passed from one iteration to the next is not). Forgets the iteration's reads.
Result<void> check_carried_reads(ExecContext& ctx, int64_t ending_tag);

// The flags of a scan (tensor_tensor_scan) writing dst from the elements of `data` and a per-partition
// `initial` tile (or none): each result carries its own inputs' flags, and a written input that
// follows an unwritten one in its partition mixes stale data into the running value (the warning).
void follow_scan(ExecContext& ctx, std::string_view opcode, const SourceLoc& loc, const Access& dst,
                 std::initializer_list<const Access*> data, const Access* initial);

// A destination an instruction writes besides its first (activation's reduce_res, nc_match_replace8's
// dst_idx), prepared as issue_instruction prepares the first: its poison and pending copies settled,
// copies it overlaps or that read it carried out (nki/nki_tensor.h).
void prepare_second_destination(const Access& dst);

// The flags of a per-partition reduction of `from`'s elements into `res` ([P, 1]: activation's and
// the select instructions' reduce_res), warning where it mixes unwritten elements with written ones.
void follow_reduction(ExecContext& ctx, std::string_view opcode, const SourceLoc& loc, const Access& from,
                      const Access& res);

}  // namespace nki_agent
