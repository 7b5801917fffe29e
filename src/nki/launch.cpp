#include "nki/launch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "nki/error_catalogue.h"
#include "nki/written.h"

namespace nki_agent {

namespace {

// Drops the spans that can overlap nothing to come: their tensor is gone (the list holds the last
// reference) and they ended before every tensor still alive began.
void prune_ranges(std::vector<std::shared_ptr<LiveRange>>& ranges, int64_t now) {
  int64_t open_first = now;
  for (const auto& r : ranges)
    if (r.use_count() > 1 && r->first >= 0) open_first = std::min(open_first, r->first);
  std::erase_if(ranges,
                [&](const std::shared_ptr<LiveRange>& r) { return r.use_count() == 1 && r->last < open_first; });
}

std::shared_ptr<LiveRange> new_range(const NkiTensor& t, int64_t partitions, const SourceLoc& loc) {
  auto r = std::make_shared<LiveRange>();
  r->bytes = t.data.nbytes() / partitions;
  r->loc = loc;
  return r;
}

int64_t iteration_tag(int64_t loop, int64_t iteration) {
  return (loop << 32) | (iteration & 0xffffffff);
}

}  // namespace

Result<void> check_tensor_shape(const ExecContext& ctx, const Shape& shape, Buffer b, int blocks) {
  for (int64_t d : shape)
    if (d < 0)
      return fail(nki_error("nkia_bad_shape", fmt::format("negative dimension in shape {}", shape_str(shape)),
                            "use sizes of 0 or more"));
  if (!buffer_is_on_chip(b)) return {};
  if (blocks < 0 || static_cast<size_t>(blocks) >= shape.size()) blocks = 0;
  if (shape.size() - static_cast<size_t>(blocks) < 2)
    return fail(nki_error("nkia_insufficient_rank",
                          fmt::format("an {} tensor needs a partition and a free dimension, got shape {}",
                                      buffer_name(b), shape_str(shape)),
                          "give on-chip tiles at least two dimensions, e.g. (128, 1) instead of (128,)"));
  const int64_t p = shape[static_cast<size_t>(blocks)];
  if (p > ctx.target->partitions)
    return fail(
        nki_error("err_num_partition_exceed_arch_limit",
                  fmt::format("number of partitions {} of the {} tensor {} exceeds the architecture limit of {}", p,
                              buffer_name(b), shape_str(shape), ctx.target->partitions),
                  fmt::format("tile the partition dimension in blocks of at most {} (nl.tile_size.pmax)",
                              ctx.target->partitions)));
  return {};
}

Diagnostic outside_kernel_error(std::string_view api) {
  return nki_error("err_nki_api_outside_of_nki_kernel",
                   fmt::format("'{}' was called outside of a running NKI kernel", api),
                   "call NKI APIs only inside a function decorated with @nki.jit, launched by calling it");
}

bool role_writes(std::string_view role) {
  return role == "dst" || role == "dst_idx" || role == "reduce_res";
}

Result<void> check_writable(const Access& a, std::string_view role) {
  if (a.tensor->immutable && role_writes(role))
    return fail(nki_error("err_cannot_update_immutable_parameter",
                          fmt::format("the kernel writes into its input {}", a.describe()),
                          "store results into a separate output (nl.ndarray(..., buffer=nl.shared_hbm)) and return "
                          "it; to update an input in place, annotate it nt.mutable_tensor and return it"));
  return {};
}

Poison fresh_poison(const ExecContext& ctx, Buffer b) {
  if (!ctx.compute) return buffer_is_on_chip(b) ? Poison::kNone : Poison::kZeros;
  return ctx.eager_state ? Poison::kNow : Poison::kLazy;
}

std::optional<Diagnostic> unwritten_output_warning(const std::shared_ptr<NkiTensor>& tensor,
                                                   const SourceLoc& returned_at) {
  const auto pos = first_unwritten(whole(tensor));
  const NkiTensor& t = *tensor;
  if (!pos) return std::nullopt;
  const std::string name = fmt::format("'{}' {}", t.name.empty() ? "tensor" : t.name, shape_str(t.data.shape()));
  Diagnostic d;
  if (t.writes.stale_origin.known()) {
    d = nki_error("nkia_uninitialized_read",
                  fmt::format("{}, and what it computed reached the returned output {} (the first element "
                              "affected: [{}]); on hardware those results would come from stale memory",
                              t.writes.stale_what, name, fmt::join(*pos, ", ")));
    d.at(t.writes.stale_origin);
  } else {
    d = nki_error("nkia_output_partially_written",
                  fmt::format("the returned output {} has elements that nothing wrote, or that were computed "
                              "only from unwritten memory (the first: [{}]); on hardware they keep whatever the "
                              "buffer held",
                              name, fmt::join(*pos, ", ")));
    d.at(returned_at);
  }
  d.severity = Severity::kWarning;
  return d;
}

// ---- the launch ------------------------------------------------------------------------------------

Launch::Launch(std::vector<int64_t> g) : grid(std::move(g)), program_id(grid.size(), 0) {}

int64_t Launch::instances() const {
  int64_t n = 1;
  for (int64_t g : grid) n *= g;
  return n;
}

void Launch::begin_instance(int64_t i) {
  int64_t rem = i;
  for (size_t d = grid.size(); d-- > 0;) {
    program_id[d] = rem % grid[d];
    rem /= grid[d];
  }
  shared_next_ = 0;
  psum_ranges_.clear();
  sbuf_ranges_.clear();
  sbuf_prune_at_ = kPruneAt;
}

void Launch::begin_instance(int64_t i, int64_t rank) {
  switch_rank(rank);
  begin_instance(i);
}

void Launch::switch_rank(int64_t rank) {
  if (rank == rank_) return;
  RankState& out = parked_ranks_[rank_];
  out.shared_hbm = std::move(shared_hbm_);
  out.trace = std::move(exec.trace);
  out.rng = exec.rng;
  auto in = parked_ranks_.find(rank);
  if (in != parked_ranks_.end()) {
    shared_hbm_ = std::move(in->second.shared_hbm);
    exec.trace = std::move(in->second.trace);
    exec.rng = in->second.rng;
    parked_ranks_.erase(in);
  } else {  // the rank's first instance: nothing allocated, nothing traced, a random stream of its own
    shared_hbm_.clear();
    const bool recording = exec.trace.recording();
    exec.trace = Trace{};
    exec.trace.set_recording(recording);
    exec.rng = Rng{0, static_cast<uint64_t>(rank)};
  }
  rank_ = rank;
}

Result<void> Launch::end_instance() {
  if (auto ok = check_psum_capacity(exec, psum_ranges_); !ok) return fail(ok.error());
  note_sbuf_use(sbuf_, exec, sbuf_ranges_);
  return {};
}

Launch::InstanceState Launch::park() {
  InstanceState s;
  s.rank = rank_;
  s.program_id = program_id;
  s.shared_next = shared_next_;
  s.loops = std::move(loops_);
  s.affine_tag = exec.affine_tag;
  s.carried_reads = std::move(exec.carried_reads);
  s.vector_accumulator = std::move(exec.vector_accumulator);
  s.psum_ranges = std::move(psum_ranges_);
  s.sbuf_ranges = std::move(sbuf_ranges_);
  s.sbuf_prune_at = sbuf_prune_at_;
  s.alloc = std::move(alloc);
  alloc = AllocationTracker{};
  loops_.clear();
  exec.affine_tag = 0;
  exec.carried_reads.clear();
  exec.vector_accumulator.clear();
  psum_ranges_.clear();
  sbuf_ranges_.clear();
  return s;
}

void Launch::resume(InstanceState s) {
  switch_rank(s.rank);
  program_id = std::move(s.program_id);
  shared_next_ = s.shared_next;
  loops_ = std::move(s.loops);
  exec.affine_tag = s.affine_tag;
  exec.carried_reads = std::move(s.carried_reads);
  exec.vector_accumulator = std::move(s.vector_accumulator);
  psum_ranges_ = std::move(s.psum_ranges);
  sbuf_ranges_ = std::move(s.sbuf_ranges);
  sbuf_prune_at_ = s.sbuf_prune_at;
  alloc = std::move(s.alloc);
}

void Launch::finish() {
  if (auto w = sbuf_capacity_warning(exec, sbuf_)) exec.warnings.add(std::move(*w));
}

// Tracks a new PSUM tensor's live span for the capacity check. Kernels that allocate PSUM tiles
// without end keep the list short: now and then the spans are checked as they stand, and those that
// can overlap nothing to come are dropped.
Result<void> Launch::track_psum(NkiTensor& t, int64_t partitions, const SourceLoc& loc) {
  if (t.buffer != Buffer::kPsum || partitions <= 0) return {};
  if (psum_ranges_.size() >= kPruneAt) {
    if (auto ok = check_psum_capacity(exec, psum_ranges_); !ok) return fail(ok.error());
    prune_ranges(psum_ranges_, instruction_clock());
  }
  t.launch.live = new_range(t, partitions, loc);
  psum_ranges_.push_back(t.launch.live);
  return {};
}

// Tracks a new SBUF tile's live span for the capacity warning, the same way. Every nl call makes a
// tile, so the list is folded into the launch's SbufUse and pruned whenever it has doubled since the
// last time (tiles a kernel keeps alive stay in it).
void Launch::track_sbuf(NkiTensor& t, int64_t partitions, const SourceLoc& loc) {
  if (t.buffer != Buffer::kSbuf || partitions <= 0) return;
  if (sbuf_ranges_.size() >= sbuf_prune_at_) {
    note_sbuf_use(sbuf_, exec, sbuf_ranges_);
    prune_ranges(sbuf_ranges_, instruction_clock());
    sbuf_prune_at_ = std::max<size_t>(kPruneAt, 2 * sbuf_ranges_.size());
  }
  t.launch.live = new_range(t, partitions, loc);
  sbuf_ranges_.push_back(t.launch.live);
}

Result<std::shared_ptr<NkiTensor>> Launch::new_tensor(const TensorRequest& r, const SourceLoc& loc) {
  if (auto ok = check_tensor_shape(exec, r.shape, r.buffer, r.blocks); !ok) return fail(ok.error());
  const Buffer b = r.buffer;
  int blocks = r.blocks;
  if (buffer_is_on_chip(b) && (blocks < 0 || static_cast<size_t>(blocks) >= r.shape.size())) blocks = 0;
  const int64_t scope = current_scope();
  if (b == Buffer::kSharedHbm && scope != 0)
    return fail(nki_error(
        "err_shared_hbm_must_in_kernel_level",
        fmt::format("a shared_hbm tensor {} {} is created inside a loop", dtype_name(r.dtype), shape_str(r.shape)),
        "create outputs once, at the kernel's top level, large enough for every iteration, and "
        "index them inside the loop"));
  if (b == Buffer::kSharedHbm) {
    if (shared_next_ < shared_hbm_.size()) {  // a later SPMD instance: the first one's tensor
      auto& same = shared_hbm_[shared_next_++];
      if (same->data.shape() != r.shape || same->data.dtype() != r.dtype)
        return fail(nki_error("nkia_bad_shape",
                              fmt::format("SPMD instances allocate different shared_hbm tensors: {} {} here, {} {} in "
                                          "the first instance",
                                          dtype_name(r.dtype), shape_str(r.shape), dtype_name(same->data.dtype()),
                                          shape_str(same->data.shape())),
                              "allocate the same outputs, in the same order, in every instance"));
      return same;
    }
    shared_hbm_.push_back(make_nki_tensor(r.shape, r.dtype, b, r.name, fresh_poison(exec, b)));
    shared_next_++;
    return shared_hbm_.back();
  }
  auto tensor = make_nki_tensor(r.shape, r.dtype, b, r.name, fresh_poison(exec, b));
  tensor->iterations.created_tag = exec.affine_tag;
  tensor->launch.scope = scope;
  if (buffer_is_on_chip(b)) tensor->blocks = blocks;
  // PSUM's capacity check counts auto-allocated tiles; block tensors (whose blocks the compiler
  // may rotate through fewer buffers) and tensors the kernel placed itself are left out.
  // SBUF's capacity warning counts the same tiles.
  if (b == Buffer::kPsum && r.auto_allocated && blocks == 0) {
    if (auto ok = track_psum(*tensor, r.shape[0], loc); !ok) return fail(ok.error());
  }
  if (b == Buffer::kSbuf && r.auto_allocated && blocks == 0) track_sbuf(*tensor, r.shape[0], loc);
  if (auto ok = alloc.on_create(exec, tensor, r.origin, r.placement ? &*r.placement : nullptr, first_iterations(), loc);
      !ok)
    return fail(ok.error());
  return tensor;
}

Result<std::shared_ptr<NkiTensor>> Launch::new_matmul_result(const Access& stationary, const Access& moving,
                                                             MatmulPerfMode mode, const SourceLoc& loc) {
  const size_t free_axis = mode == MatmulPerfMode::kDoubleRow ? 2 : 1;
  const Shape shape{stationary.shape()[free_axis], moving.shape()[free_axis]};
  auto dst = make_nki_tensor(shape, DType::kFloat32, Buffer::kPsum, "", fresh_poison(exec, Buffer::kPsum));
  dst->launch.scope = current_scope();
  dst->iterations.created_tag = exec.affine_tag;
  if (auto ok = track_psum(*dst, dst->data.shape()[0], loc); !ok) return fail(ok.error());
  if (auto ok = alloc.on_create(exec, dst, TensorOrigin::kResult, nullptr, true, loc); !ok) return fail(ok.error());
  if (dst->launch.live) dst->launch.live->touch(instruction_clock());
  return dst;
}

void Launch::mark_result(const std::shared_ptr<NkiTensor>& t, const SourceLoc& loc) {
  alloc.mark_result(t, loc);
}

Result<void> Launch::admit(const Access& a, std::string_view role) {
  // A name rebound inside a loop body (acc = nl.add(acc, ...)) is caught at its first use out of
  // scope: in the next iteration, or after the loop.
  if (!scope_open(a.tensor->launch.scope))
    return fail(nki_error("err_local_variable_used_out_of_scope",
                          fmt::format("{} ('{}') was created inside a loop iteration that has ended (a tensor belongs "
                                      "to the loop body, and the iteration, that created it)",
                                      a.describe(), role),
                          "create the tensor before the loop and write into it with slice assignment (acc[...] = ... "
                          "or acc[...] += ...), instead of rebinding the name inside the loop"));
  if (auto ok = check_writable(a, role); !ok) return fail(ok.error());
  if (a.tensor->launch.live) a.tensor->launch.live->touch(instruction_clock());
  return alloc.on_access(a, role_writes(role), role == "value", instruction_clock());
}

// ---- loops -----------------------------------------------------------------------------------------

int64_t Launch::loop_begin(bool affine, bool scoped) {
  Loop l;
  l.id = next_id_++;
  l.affine = affine;
  l.scoped = scoped;
  loops_.push_back(l);
  return l.id;
}

void Launch::refresh_affine_tag() {
  exec.affine_tag = 0;
  for (const auto& l : loops_)
    if (l.affine && l.iteration >= 0) exec.affine_tag = iteration_tag(l.id, l.iteration);
}

// The end of an iteration of an affine loop: its reads of values other iterations wrote.
Result<void> Launch::end_iteration(const Loop& l) {
  if (l.affine && l.iteration >= 0) return check_carried_reads(exec, iteration_tag(l.id, l.iteration));
  return {};
}

Result<void> Launch::loop_next(int64_t id) {
  for (auto& l : loops_)
    if (l.id == id) {
      if (auto r = end_iteration(l); !r) return r;
      ++l.iteration;
      l.scope = next_id_++;
    }
  refresh_affine_tag();
  return {};
}

Result<void> Launch::loop_done(int64_t id) {
  for (const auto& l : loops_)
    if (l.id == id) {
      if (auto ok = end_iteration(l); !ok) return ok;
    }
  return {};
}

void Launch::loop_end(int64_t id) {
  for (size_t i = 0; i < loops_.size(); ++i)
    if (loops_[i].id == id) {
      loops_.resize(i);
      break;
    }
  refresh_affine_tag();
}

int64_t Launch::current_scope() const {
  for (size_t i = loops_.size(); i-- > 0;)
    if (loops_[i].scoped) return loops_[i].scope;
  return 0;
}

bool Launch::first_iterations() const {
  for (const Loop& l : loops_)
    if (l.scoped && l.iteration > 0) return false;
  return true;
}

bool Launch::scope_open(int64_t scope) const {
  if (scope == 0) return true;
  for (const Loop& l : loops_)
    if (l.scope == scope) return true;
  return false;
}

}  // namespace nki_agent
