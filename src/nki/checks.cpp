#include "nki/checks.h"

#include "nki/aliases.h"
#include "nki/error_catalogue.h"
#include "nki/written.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

namespace nki_agent {

Result<void> check_on_chip(const Access& a, const char* instruction) {
  if (buffer_is_on_chip(a.buffer())) return {};
  return fail(nki_error("err_unsupported_memory",
                        fmt::format("'{}' needs its operand {} in SBUF or PSUM, but it is in {}", instruction,
                                    a.describe(), buffer_name(a.buffer())),
                        "load HBM data into an SBUF tile first (nl.load, or nisa.dma_copy into an nl.sbuf tile)"));
}

Result<void> check_partition_limit(const ExecContext& ctx, const Access& a, const char* instruction) {
  if (!buffer_is_on_chip(a.buffer()) || a.partitions() <= ctx.target->partitions) return {};
  return fail(nki_error(
      "err_num_partition_exceed_arch_limit",
      fmt::format("number of partitions {} of {} in '{}' exceeds the architecture limit of {}", a.partitions(),
                  a.describe(), instruction, ctx.target->partitions),
      fmt::format("tile the partition dimension in blocks of at most {} (nl.tile_size.pmax)", ctx.target->partitions)));
}

Result<void> check_partition_access(const Access& a, const char* instruction) {
  if (!buffer_is_on_chip(a.buffer()) || a.view.ndim() == 0) return {};
  const int64_t n = a.partitions();
  const int64_t stride = a.view.strides()[0];
  // A view that repeats one partition's data across partitions (a broadcast, stride 0) is lowered
  // by the front end, not addressed as such; nothing to check.
  if (n <= 0 || (n > 1 && stride == 0)) return {};
  const int64_t pstride = a.partition_stride();
  const int64_t block =
      a.tensor->blocks > 0 ? pstride * a.tensor->data.shape()[static_cast<size_t>(a.tensor->blocks)] : 0;
  if (n > 1 && block > 0 && stride % block == 0)
    return fail(nki_error("err_failed_to_infer_tile_from_local_tensor",
                          fmt::format("failed to infer a tile from {} in '{}': its first axis is a block axis of a "
                                      "tensor with nl.par_dim, not the partition axis",
                                      a.describe(), instruction),
                          "index the block dimensions away and pass one tile at a time (buf[i]), in a loop over "
                          "the blocks"));
  if (n > 1 && stride != pstride)
    return fail(nki_error("nkia_partition_not_contiguous",
                          fmt::format("operand {} of '{}' steps over partitions: engines access a run of consecutive "
                                      "partitions (the partition index must have unit stride)",
                                      a.describe(), instruction),
                          "keep the partition index unit-stride and move the step to a free axis (view the data as "
                          "[n, 2, F] and index [i_p, 0, i_f]), or transpose first"));
  const int64_t start = a.start_partition();
  const bool ok = n > 64 ? start == 0 : n > 32 ? (start == 0 || start == 64) : start % 32 == 0;
  if (ok) return {};
  return fail(nki_error("nkia_partition_start_alignment",
                        fmt::format("operand {} of '{}' spans {} partitions starting at partition {}: an operand of "
                                    "more than 64 partitions must start at 0, of 33 to 64 at 0 or 64, of 32 or fewer "
                                    "at 0, 32, 64 or 96",
                                    a.describe(), instruction, n, start),
                        "start the operand at an allowed partition (load those rows into a tile of their own, which "
                        "starts at partition 0), or move the data across partitions on the Tensor Engine"));
}

Result<void> check_engine_memory(const Access& a, Engine engine, const char* instruction) {
  if (engine != Engine::kGpSimd || a.buffer() != Buffer::kPsum) return {};
  return fail(nki_error("err_unsupported_memory",
                        fmt::format("'{}' runs on the GpSimd engine, which cannot access PSUM, but its operand {} is "
                                    "in PSUM",
                                    instruction, a.describe()),
                        "copy the PSUM tile to SBUF first (nl.copy or nisa.tensor_copy on the Vector engine)"));
}

Result<void> check_matmul_inputs_in_sbuf(const Access& stationary, const Access& moving, const char* instruction) {
  for (const Access* in : {&stationary, &moving})
    if (in->buffer() != Buffer::kSbuf)
      return fail(nki_error("err_unsupported_memory",
                            fmt::format("'{}' reads its inputs from SBUF, but {} is in {}", instruction, in->describe(),
                                        buffer_name(in->buffer())),
                            "load or copy the matmul operands into SBUF tiles"));
  return {};
}

Result<void> check_core_version(const ExecContext& ctx, int core_version, const char* instruction,
                                std::string_view hint) {
  if (ctx.target->core_version >= core_version) return {};
  return fail(nki_error("nkia_feature_not_on_target",
                        fmt::format("'{}' needs NeuronCore-v{} or later, but the target {} is {}", instruction,
                                    core_version, ctx.target->name, ctx.target->core),
                        std::string(hint)));
}

Result<void> check_free_size(const ExecContext& ctx, const Access& a, Engine engine, const char* instruction) {
  if (engine != Engine::kVector && engine != Engine::kScalar) return {};
  const int64_t p = a.partitions();
  const int64_t n = p > 0 ? a.view.numel() / p : 0;
  const bool psum = a.buffer() == Buffer::kPsum;
  const int64_t limit = psum ? ctx.target->engine_fmax_psum : ctx.target->engine_fmax_sbuf;
  if (n <= limit) return {};
  return fail(nki_error("err_size_of_dimension_exceed_arch_limit",
                        fmt::format("operand {} of '{}' has {} elements per partition, more than the {} a {} engine "
                                    "instruction reads from {}",
                                    a.describe(), instruction, n, limit, engine_name(engine), psum ? "PSUM" : "SBUF"),
                        fmt::format("process the free axis in chunks of at most {} elements (for a reduction, "
                                    "combine the chunks' partial results)",
                                    limit)));
}

Result<void> check_tiles(const ExecContext& ctx, std::initializer_list<const Access*> tiles, const char* instruction,
                         Engine engine) {
  for (const Access* t : tiles) {
    if (dtype_is_packed(t->dtype()))
      return fail(nki_error("nkia_packed_dtype_operand",
                            fmt::format("'{}' does not compute on the packed MX tile {} ({})", instruction,
                                        t->describe(), dtype_name(t->dtype())),
                            "move MX tiles with nisa.dma_copy, quantize bfloat16 values with nisa.quantize_mx, or "
                            "view the bits as an integer type (t.view(nl.uint32))"));
    if (auto r = check_on_chip(*t, instruction); !r) return r;
    if (auto r = check_engine_memory(*t, engine, instruction); !r) return r;
    if (auto r = check_partition_limit(ctx, *t, instruction); !r) return r;
    if (auto r = check_partition_access(*t, instruction); !r) return r;
    if (auto r = check_free_size(ctx, *t, engine, instruction); !r) return r;
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

LivePeak live_peak(const std::vector<std::shared_ptr<LiveRange>>& ranges, int64_t capacity) {
  // Sweep the spans in instruction order: at each instruction, the spans that end before it are
  // released first, then those that begin at it are added.
  struct Event {
    int64_t at;
    int kind;  // 0: release (at = last + 1), 1: acquire (at = first)
    const LiveRange* range;
  };
  std::vector<Event> events;
  events.reserve(ranges.size() * 2);
  for (const auto& r : ranges) {
    if (!r || r->first < 0 || r->bytes <= 0) continue;
    events.push_back({r->first, 1, r.get()});
    events.push_back({r->last + 1, 0, r.get()});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.at != b.at ? a.at < b.at : a.kind < b.kind; });
  LivePeak p;
  int64_t live = 0, tensors = 0;
  for (const Event& e : events) {
    if (e.kind == 0) {
      live -= e.range->bytes;
      --tensors;
      continue;
    }
    live += e.range->bytes;
    ++tensors;
    if (live > p.peak_bytes) {
      p.peak_bytes = live;
      p.peak_tensors = tensors;
    }
    if (live > capacity && !p.over) {
      p.over = e.range;
      p.over_bytes = live;
      p.over_tensors = tensors;
    }
  }
  return p;
}

Result<void> check_psum_capacity(const ExecContext& ctx, const std::vector<std::shared_ptr<LiveRange>>& ranges) {
  const int64_t capacity = ctx.target->psum_bytes_per_partition;
  const LivePeak p = live_peak(ranges, capacity);
  if (!p.over) return {};
  return fail(nki_error("nkia_psum_capacity_exceeded",
                        fmt::format("{} PSUM tensors are live at once and need {} bytes per partition, more than "
                                    "PSUM's {} ({} banks of {} bytes); this one ({} bytes per partition) goes over",
                                    p.over_tensors, p.over_bytes, capacity, ctx.target->psum_banks,
                                    ctx.target->psum_bank_bytes, p.over->bytes),
                        "keep at most 8 accumulators of 2 KiB alive: evict each finished one to SBUF (nl.copy) "
                        "and allocate PSUM tiles inside the loop that fills them, not all up front")
                  .at(p.over->loc));
}

void note_sbuf_use(SbufUse& use, const ExecContext& ctx, const std::vector<std::shared_ptr<LiveRange>>& ranges) {
  const LivePeak p = live_peak(ranges, ctx.target->sbuf_bytes_per_partition);
  if (p.peak_bytes > use.peak_bytes) {
    use.peak_bytes = p.peak_bytes;
    use.peak_tensors = p.peak_tensors;
  }
  if (p.over && !use.over) {
    use.over = true;
    use.over_loc = p.over->loc;
    use.over_tile_bytes = p.over->bytes;
  }
}

std::optional<Diagnostic> sbuf_capacity_warning(const ExecContext& ctx, const SbufUse& use) {
  const int64_t capacity = ctx.target->sbuf_bytes_per_partition;
  if (!use.over || capacity <= 0 || use.peak_bytes <= capacity) return std::nullopt;
  Diagnostic d = nki_error(
      "nkia_sbuf_capacity_exceeded",
      fmt::format("live SBUF tiles need {} bytes per partition at their busiest ({} tiles at once), more than the {} "
                  "usable per partition on {} ({}); the tile allocated here ({} bytes per partition) first took them "
                  "over. The compiler would spill tiles to HBM and reload them; nki-agent runs the kernel as if "
                  "they fit",
                  use.peak_bytes, use.peak_tensors, capacity, ctx.target->name, ctx.target->core, use.over_tile_bytes));
  d.severity = Severity::kWarning;
  d.at(use.over_loc);
  return d;
}

InstructionRecord instruction_record(Engine e, const InstrOp& op, const SourceLoc& loc, const Access& dst,
                                     std::span<const Access* const> srcs) {
  InstructionRecord r;
  r.engine = e;
  r.op = op;
  r.loc = loc;
  r.elements = dst.view.numel();
  r.operands.push_back(record_operand(dst, true));
  for (const Access* s : srcs) r.operands.push_back(record_operand(*s, false));
  return r;
}

void warn_unwritten_read(ExecContext& ctx, std::string_view opcode, const SourceLoc& loc, const Access& src) {
  NkiTensor& t = *src.tensor;
  if (t.writes.all_written || t.writes.unwritten_read_reported) return;
  const auto pos = first_unwritten(src);
  if (!pos) return;
  t.writes.unwritten_read_reported = true;
  const std::string alloc = t.launch.live && t.launch.live->loc.line > 0
                                ? fmt::format(" (allocated at line {})", t.launch.live->loc.line)
                                : std::string();
  const std::string holds = dtype_is_float(t.data.dtype()) ? "NaN" : fmt::format("{}", kPoisonInt);
  Diagnostic d = nki_error(
      "nkia_uninitialized_read",
      t.written ? fmt::format("'{}' combines elements of {}{} that were never written (the first at [{}] of the "
                              "operand) into its results; they hold {} here, stale data on hardware",
                              opcode, src.describe(), alloc, fmt::join(*pos, ", "), holds)
                : fmt::format("'{}' reads {}{}, which nothing has written yet; it holds {} here, stale data on "
                              "hardware",
                              opcode, src.describe(), alloc, holds));
  d.severity = Severity::kWarning;
  d.at(loc);
  ctx.warnings.add(std::move(d));
}

void note_stale(const Access& dst, std::string_view opcode, const SourceLoc& loc, const Access& src) {
  NkiTensor& t = *dst.tensor;
  if (t.writes.stale_origin.known()) return;
  t.writes.stale_origin = loc;
  t.writes.stale_what = fmt::format("'{}' combined unwritten elements of {} with written ones", opcode, src.describe());
}

void inherit_stale(const Access& dst, std::span<const Access* const> srcs) {
  NkiTensor& t = *dst.tensor;
  if (t.writes.stale_origin.known()) return;
  for (const Access* s : srcs)
    if (s->tensor->writes.stale_origin.known() && s->tensor.get() != &t) {
      t.writes.stale_origin = s->tensor->writes.stale_origin;
      t.writes.stale_what = s->tensor->writes.stale_what;
      return;
    }
}

namespace {

// One flag per partition of a's elements (all written: 1, none: 0, some: 0 and noted stale on dst),
// broadcast along `shape` ([P, F...]); nullopt when the partition counts differ.
std::optional<Tensor> partition_flags(const Access& a, const Shape& shape, const Access& dst, std::string_view opcode,
                                      const SourceLoc& loc) {
  const Tensor raw = written_flags(a);
  if (!raw.defined()) return Tensor();
  if (shape.empty() || raw.ndim() == 0 || raw.shape()[0] != shape[0]) return std::nullopt;
  std::vector<int> free_axes;
  for (int ax = 1; ax < raw.ndim(); ++ax) free_axes.push_back(ax);
  bool mixed = false;
  const Tensor per = free_axes.empty() ? raw : reduce_flags(raw, free_axes, mixed);
  if (mixed) note_stale(dst, opcode, loc, a);
  Shape col(shape.size(), 1);
  col[0] = shape[0];
  return per.reshape(col).broadcast_to(shape).copy();
}

}  // namespace

namespace {

bool own_storage(const Access& a) {
  return a.view.storage() == a.tensor->data.storage() && a.view.numel() > 0;
}

// Inside an nl.affine_range iteration: notes srcs' on-chip elements that another iteration of the
// loop wrote (checked when the iteration ends), and tags dst's elements with this iteration when
// dst outlives it (a tensor created in this very iteration cannot carry anything to the next) and
// is a plain tile of at most 4 Mi elements.
void follow_iterations(ExecContext& ctx, const std::string& opcode, const SourceLoc& loc, const Access& dst,
                       std::span<const Access* const> srcs) {
  const int64_t tag = ctx.affine_tag;
  for (const Access* s : srcs) {
    NkiTensor& t = *s->tensor;
    if (t.iterations.chip_tags.empty() || !own_storage(*s)) continue;
    ExecContext::CarriedRead read;
    read.writer = t.iterations.chip_tags.other_iterations(s->view, t.data, tag, &read.elements);
    if (read.writer == 0) continue;
    read.tensor = s->tensor;
    read.tag = tag;
    read.loc = loc;
    read.opcode = opcode;
    ctx.carried_reads.push_back(std::move(read));
  }
  NkiTensor& d = *dst.tensor;
  if (!buffer_is_on_chip(dst.buffer()) || d.iterations.created_tag == tag || !own_storage(dst)) return;
  // Legacy block tensors keep no tags: real software-pipelined kernels hand values from one
  // affine_range iteration to a later one through their blocks, and the compiler accepts them (the
  // public flash-attention kernel, conformance case S36, reads in iteration i the running sums
  // iteration i - 2 wrote). Tensors of more than 4 Mi elements keep none either: should their
  // writes of parts be applied element by element, 8 bytes an element would cost too much memory.
  if (d.blocks > 0 || d.data.numel() > (int64_t{1} << 22)) return;
  d.iterations.chip_tags.set(dst.view, d.data, tag);
}

}  // namespace

Result<void> check_carried_reads(ExecContext& ctx, int64_t ending_tag) {
  std::optional<Diagnostic> found;
  std::erase_if(ctx.carried_reads, [&](const ExecContext::CarriedRead& r) {
    if (r.tag != ending_tag) return false;
    if (!found)
      for (int64_t off : r.elements)
        if (r.tensor->iterations.chip_tags.at(off) != ending_tag) {
          found = nki_error(
              "nkia_affine_range_carried_dependency",
              fmt::format("'{}' in iteration {} of an nl.affine_range loop reads {} elements that iteration {} "
                          "wrote, and this iteration does not write them again: the value is carried from one "
                          "iteration to another, but affine_range iterations may run in any order",
                          r.opcode, ending_tag & 0xffffffff,
                          r.tensor->name.empty() ? std::string("a tensor's") : "'" + r.tensor->name + "'",
                          r.writer & 0xffffffff),
              "use nl.sequential_range for a loop whose iterations pass values on (running sums, recurrences); "
              "accumulating into the same elements (acc += x) is the one cross-iteration pattern affine_range "
              "allows");
          found->at(r.loc);
          break;
        }
    return true;
  });
  if (found) return fail(std::move(*found));
  return {};
}

namespace {

// Whether every element an elementwise instruction reads of `srcs` was written, for sources written
// only in part (a masked store of a tile that was loaded under the same mask).
bool reads_written(std::span<const Access* const> srcs, const Shape& shape) {
  for (const Access* s : srcs) {
    if (s->tensor->writes.all_written) continue;
    const std::optional<Tensor> f = aligned_flags(*s, shape);
    if (!f || !all_ones(*f)) return false;
  }
  return true;
}

}  // namespace

InstructionRecord issue_instruction(ExecContext& ctx, Engine e, const InstrOp& op, const SourceLoc& loc,
                                    const Access& dst, std::span<const Access* const> srcs, DataFlow flow,
                                    bool settle_reads) {
  const std::string opcode = instruction_text(op);
  sync_alias_from_origin(*dst.tensor);
  for (const Access* s : srcs) sync_alias_from_origin(*s->tensor);
  if (ctx.affine_tag != 0) follow_iterations(ctx, opcode, loc, dst, srcs);
  bool every_written = true;
  for (const Access* s : srcs) {
    if (settle_reads) settle(*s->tensor);
    if (!s->tensor->written) warn_unwritten_read(ctx, opcode, loc, *s);  // nothing at all written: a bug
    every_written = every_written && s->tensor->writes.all_written;
  }
  // Clean values only, when the part read was written: then dst is not settled (a large output
  // written by masked stores is never poisoned whole only to be overwritten).
  if (!every_written && flow == DataFlow::kElementwise) every_written = reads_written(srcs, dst.shape());
  // dst's unwritten elements may stay unpoisoned only where the instruction writes clean values
  // over them: an instruction that sets dst's flags itself (and may read dst, as an accumulating
  // matmul does) or writes garbage-derived values (flags of 0 over computed data) settles first.
  if (flow == DataFlow::kCustom || !every_written) settle(*dst.tensor);
  before_write(dst);
  if (flow == DataFlow::kCustom) {
    // the instruction sets dst's flags itself
  } else if (every_written) {
    mark_written(dst);
  } else if (flow == DataFlow::kCombined) {
    for (const Access* s : srcs) warn_unwritten_read(ctx, opcode, loc, *s);
    mark_written(dst);
  } else {
    Tensor flags;
    for (const Access* s : srcs) {
      const std::optional<Tensor> f = flow == DataFlow::kElementwise
                                          ? aligned_flags(*s, dst.shape())
                                          : partition_flags(*s, dst.shape(), dst, opcode, loc);
      if (!f) {  // no elementwise correspondence: report as a combining read
        warn_unwritten_read(ctx, opcode, loc, *s);
        continue;
      }
      flags = and_flags(flags, *f);
    }
    set_written(dst, flags);
    if (flags.defined()) {
      inherit_stale(dst, srcs);
      // Unwritten elements stored into HBM: on hardware the tensor gets whatever memory nothing wrote
      // held there (the masked-off lanes of a partial load), so the store itself is the read.
      NkiTensor& t = *dst.tensor;
      if (buffer_is_hbm(t.buffer) && !t.writes.stale_origin.known() && !all_ones(flags)) {
        t.writes.stale_origin = loc;
        t.writes.stale_what =
            fmt::format("'{}' stored elements of {} that nothing wrote into {}", opcode,
                        srcs.size() == 1 ? srcs.begin()[0]->describe() : std::string("its sources"), dst.describe());
      }
    }
  }
  if (!ctx.trace.recording()) {  // nothing keeps the record: only what names the instruction
    InstructionRecord bare;
    bare.engine = e;
    bare.op = op;
    bare.loc = loc;
    return bare;
  }
  return instruction_record(e, op, loc, dst, srcs);
}

void follow_scan(ExecContext& ctx, std::string_view opcode, const SourceLoc& loc, const Access& dst,
                 std::initializer_list<const Access*> data, const Access* initial) {
  std::vector<const Access*> reads(data);
  if (initial) reads.push_back(initial);
  Tensor flags;
  for (const Access* a : reads) {
    const auto f = aligned_flags(*a, dst.shape());
    if (!f) {
      warn_unwritten_read(ctx, opcode, loc, *a);
      continue;
    }
    flags = and_flags(flags, *f);
  }
  if (!flags.defined()) return mark_written(dst);
  // The running value is stale from a partition's first unwritten input on.
  const int64_t p = dst.partitions(), n = p > 0 ? flags.numel() / p : 0;
  uint8_t* f = flags.data_as<uint8_t>();
  bool mixed = false;
  for (int64_t row = 0; row < p; ++row) {
    bool stale = false;
    for (int64_t i = 0; i < n; ++i) {
      uint8_t& w = f[row * n + i];
      mixed = mixed || (stale && w);
      stale = stale || !w;
      if (stale) w = 0;
    }
  }
  set_written(dst, flags);
  inherit_stale(dst, reads);
  if (mixed)
    for (const Access* a : reads)
      if (!all_written(*a)) note_stale(dst, opcode, loc, *a);
}

void prepare_second_destination(const Access& dst) {
  settle(*dst.tensor);
  before_write(dst);
}

void follow_reduction(ExecContext& ctx, std::string_view opcode, const SourceLoc& loc, const Access& from,
                      const Access& res) {
  (void)ctx;
  prepare_second_destination(res);
  const auto f = partition_flags(from, res.shape(), res, opcode, loc);
  set_written(res, f ? *f : Tensor());
  if (f && f->defined()) inherit_stale(res, std::span<const Access* const>(std::array{&from}));
}

}  // namespace nki_agent
