#include "runtime/python/replay.h"

#include <fmt/format.h>

#include <cstring>

#include "core/log.h"
#include "nki/launch.h"
#include "runtime/python/launch.h"
#include "runtime/python/py_host.h"

namespace nki_agent {

namespace {

// Most memory a recording's steps take (about): past it (a kernel of millions of instructions) the run
// is not recorded, and the kernel process keeps its memory for the kernel.
constexpr size_t kMaxRecordingBytes = size_t{64} << 20;

size_t step_bytes(size_t operands, size_t rank) {
  return 160 + operands * (96 + 2 * rank * sizeof(int64_t));
}

// Whether runs i and j of a call take inputs of the same types and shapes.
bool same_inputs(const KernelCall& call, int i, int j) {
  const size_t per = call.inputs.size() / static_cast<size_t>(call.runs);
  for (size_t k = 0; k < per; ++k) {
    const Tensor& a = call.inputs[static_cast<size_t>(i) * per + k];
    const Tensor& b = call.inputs[static_cast<size_t>(j) * per + k];
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  }
  return true;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ca = a.is_contiguous() ? a : a.contiguous();
  const Tensor cb = b.is_contiguous() ? b : b.contiguous();
  return ca.nbytes() == cb.nbytes() &&
         (ca.nbytes() == 0 || std::memcmp(ca.data(), cb.data(), static_cast<size_t>(ca.nbytes())) == 0);
}

// Whether a replay gave what the run it replays gave: every output's type, shape and bytes (NaN
// payloads included), and which of its elements were stored.
bool same_outcome(const KernelOutcome& replayed, const KernelOutcome& ran) {
  if (replayed.outputs.size() != ran.outputs.size() || replayed.output_specs.size() != ran.output_specs.size() ||
      replayed.output_stores.size() != ran.output_stores.size())
    return false;
  for (size_t i = 0; i < ran.output_specs.size(); ++i)
    if (replayed.output_specs[i].dtype != ran.output_specs[i].dtype ||
        replayed.output_specs[i].shape != ran.output_specs[i].shape)
      return false;
  for (size_t i = 0; i < ran.outputs.size(); ++i)
    if (!same_bytes(replayed.outputs[i], ran.outputs[i])) return false;
  for (size_t i = 0; i < ran.output_stores.size(); ++i) {
    const OutputStores &a = replayed.output_stores[i], &b = ran.output_stores[i];
    if (a.known != b.known || a.truncated != b.truncated || a.unstored != b.unstored) return false;
  }
  return true;
}

bool same_warnings(const std::vector<Diagnostic>& a, const std::vector<Diagnostic>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].code != b[i].code || a[i].message != b[i].message || a[i].loc.file != b[i].loc.file ||
        a[i].loc.line != b[i].loc.line)
      return false;
  return true;
}

}  // namespace

// ---- recording ------------------------------------------------------------------------------------

Recording* current_recording() {
  const RunScope* run = current_run();
  return run ? run->recording : nullptr;
}

int Recording::slot_of(const NkiTensor& t) const {
  auto it = slots_.find(t.id);
  return it == slots_.end() ? -1 : it->second;
}

void Recording::add_input(const std::shared_ptr<NkiTensor>& t) {
  if (!steps_.empty() || !created_.empty()) return taint("an input after the kernel began");
  if (!t->data.is_contiguous()) return taint("an input that is not contiguous");
  slots_[t->id] = static_cast<int>(inputs_.size());
  inputs_.push_back(Input{t->data.dtype(), t->data.shape(), false, t->name});
  input_refs_.push_back(t);
}

void Recording::add_created(const std::shared_ptr<NkiTensor>& t) {
  if (!why_not_.empty() || slots_.contains(t->id)) return;  // a later SPMD instance's shared_hbm tensor
  if (t->origin || !t->data.is_contiguous()) return taint("a created tensor that is a view of another");
  const int slot = static_cast<int>(inputs_.size() + created_.size());
  slots_[t->id] = slot;
  created_.push_back(Created{t->data.shape(), t->data.dtype(), t->buffer, t->name, t->blocks, t->iterations.created_tag,
                             t->launch.scope});
  Step s;
  s.create = slot;
  steps_.push_back(std::move(s));
}

void Recording::add_instruction(const ExecContext& ctx, std::span<const Access> operands, ReplayFn fn) {
  if (!why_not_.empty()) return;
  if (bytes_ > kMaxRecordingBytes) return taint("more instructions than a recording keeps");
  if (target_ == nullptr) target_ = ctx.target;
  if (ctx.target != target_) return taint("instructions for two targets");
  Step s;
  s.fn = std::move(fn);
  s.affine_tag = ctx.affine_tag;
  s.operands.reserve(operands.size());
  for (const Access& a : operands) {
    const int slot = slot_of(*a.tensor);
    if (slot < 0) return taint(fmt::format("an operand of a tensor the recording does not hold ({})", a.describe()));
    const Tensor& data = a.tensor->data;
    if (a.view.storage() != data.storage() || a.view.dtype() != data.dtype())
      return taint(fmt::format("an operand that is not a view of its tensor's data ({})", a.describe()));
    s.operands.push_back(View{slot, a.view.dtype(), a.view.shape(), a.view.strides(), a.view.offset() - data.offset()});
    bytes_ += step_bytes(1, a.view.shape().size()) - step_bytes(0, 0);
  }
  bytes_ += step_bytes(0, 0);
  steps_.push_back(std::move(s));
  ++instructions_;
}

void Recording::taint(std::string_view why) {
  if (!why_not_.empty()) return;
  why_not_ = why.empty() ? "tainted" : std::string(why);
  steps_.clear();
  steps_.shrink_to_fit();
  created_.clear();
  slots_.clear();
  input_refs_.clear();
}

void Recording::begin_launch() {
  if (++launches_ > 1) taint("a second launch in the run");
}

void Recording::finish(const std::vector<std::shared_ptr<NkiTensor>>& outputs, const KernelOutcome& outcome) {
  if (!why_not_.empty()) return;
  if (launches_ != 1) return taint("no launch in the run");
  for (const auto& t : outputs) {
    const int slot = t ? slot_of(*t) : -1;
    if (slot < 0) return taint("an output that is not a tensor of the launch");
    outputs_.push_back(slot);
  }
  // The inputs' final state of what the run set on them (immutable: a legacy kernel returning its
  // outputs; the name the kernel's parameter gave).
  for (size_t i = 0; i < inputs_.size(); ++i) {
    inputs_[i].immutable = input_refs_[i]->immutable;
    inputs_[i].name = input_refs_[i]->name;
  }
  input_refs_.clear();
  printed_ = outcome.printed;
  warnings_ = outcome.warnings;
  // Each slot goes when its last step has run; the outputs stay.
  std::vector<int> last(inputs_.size() + created_.size(), -1);
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (steps_[k].create >= 0) last[static_cast<size_t>(steps_[k].create)] = static_cast<int>(k);
    for (const View& v : steps_[k].operands) last[static_cast<size_t>(v.slot)] = static_cast<int>(k);
  }
  for (int o : outputs_) last[static_cast<size_t>(o)] = -1;
  for (size_t slot = 0; slot < last.size(); ++slot)
    if (last[slot] >= 0) steps_[static_cast<size_t>(last[slot])].release.push_back(static_cast<int>(slot));
  slots_.clear();
  finished_ = true;
}

bool Recording::matches(const KernelCall& call) const {
  if (!replayable() || !call.zero_inputs.empty() || call.inputs.size() != inputs_.size()) return false;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (call.inputs[i].dtype() != inputs_[i].dtype || call.inputs[i].shape() != inputs_[i].shape) return false;
  return true;
}

// ---- replay ---------------------------------------------------------------------------------------

std::optional<KernelOutcome> Recording::replay(const KernelCall& call, std::vector<Diagnostic>& raised) const {
  if (!matches(call)) return std::nullopt;
  try {
    return replay_steps(call, raised);
  } catch (const std::exception& e) {  // what a run would meet too (memory): Python reports it as a run does
    NKIA_LOG_DEBUG("kernel call: a replay stopped: {}", e.what());
    return std::nullopt;
  }
}

std::optional<KernelOutcome> Recording::replay_steps(const KernelCall& call, std::vector<Diagnostic>& raised) const {
  std::vector<std::shared_ptr<NkiTensor>> slots(inputs_.size() + created_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    slots[i] = run_argument(call.inputs[i], inputs_[i].name);
    slots[i]->immutable = inputs_[i].immutable;
  }
  ExecContext ctx;
  if (target_ != nullptr) ctx.target = target_;
  ctx.compute = call.compute;
  ctx.eager_state = call.eager_state;
  ctx.trace.set_recording(false);
  std::vector<Access> ops;
  for (const Step& step : steps_) {
    if (step.create >= 0) {
      const Created& c = created_[static_cast<size_t>(step.create) - inputs_.size()];
      auto t = make_nki_tensor(c.shape, c.dtype, c.buffer, c.name, fresh_poison(ctx, c.buffer));
      t->blocks = c.blocks;
      t->iterations.created_tag = c.created_tag;
      t->launch.scope = c.scope;
      slots[static_cast<size_t>(step.create)] = std::move(t);
    } else {
      ops.clear();
      for (const View& v : step.operands) {
        const std::shared_ptr<NkiTensor>& t = slots[static_cast<size_t>(v.slot)];
        ops.push_back(Access{t, Tensor(t->data.storage(), v.dtype, v.shape, v.strides, t->data.offset() + v.offset)});
      }
      ctx.affine_tag = step.affine_tag;
      const Result<void> r = step.fn(ctx, ops);
      // The loop analyses' reads are the recorded run's to check (they depend on no value).
      ctx.carried_reads.clear();
      if (!r) return std::nullopt;
    }
    for (int s : step.release) slots[static_cast<size_t>(s)].reset();
  }
  KernelOutcome out;
  out.printed = printed_;
  int idx = 0;
  for (int slot : outputs_) {
    NkiTensor& t = *slots[static_cast<size_t>(slot)];
    out.output_stores.push_back(output_stores_of(t));
    settle(t);
    out.output_specs.push_back({fmt::format("out{}", idx++), t.data.dtype(), t.data.shape()});
    if (call.want_outputs) out.outputs.push_back(t.data);
  }
  out.warnings = warnings_;
  raised = ctx.warnings.take();
  return out;
}

// ---- a call's runs ----------------------------------------------------------------------------------

bool RunSeries::worth_recording(int i, const KernelCall& one) const {
  if (!call_.compute || call_.collect_trace || !call_.kernel_only || !call_.want_outputs || !call_.zero_inputs.empty())
    return false;
  if (find(one) != nullptr) return false;  // recorded already: this run's replay failed
  for (int j = i + 1; j < call_.runs; ++j)
    if (same_inputs(call_, i, j)) return true;
  return false;
}

const RunSeries::Checked* RunSeries::find(const KernelCall& one) const {
  for (const Checked& c : recordings_)
    if (c.recording->matches(one)) return &c;
  return nullptr;
}

Result<KernelOutcome> RunSeries::run(int i) {
  KernelCall one = call_of_run(call_, i);
  if (const Checked* c = find(one)) {
    std::vector<Diagnostic> raised;
    if (auto r = c->recording->replay(one, raised); r && same_warnings(raised, c->raised)) {
      ++replayed_;
      return std::move(*r);
    }
    NKIA_LOG_DEBUG("kernel call: run {} of {} runs in Python: its replay failed or warned otherwise", i, call_.runs);
  }
  std::unique_ptr<Recording> rec;
  if (worth_recording(i, one)) rec = std::make_unique<Recording>();
  Result<KernelOutcome> outcome = python_run(one, rec.get());
  if (!rec || !outcome) return outcome;
  if (!rec->replayable()) {
    why_not_ = rec->why_not();
    NKIA_LOG_DEBUG("kernel call: run {} is not replayed: {}", i, why_not_);
    return outcome;
  }
  std::vector<Diagnostic> raised;
  auto again = rec->replay(one, raised);
  if (again && same_outcome(*again, *outcome)) {
    recordings_.push_back(Checked{std::move(rec), std::move(raised)});
    auto total = [&] {
      size_t n = 0;
      for (const Checked& c : recordings_) n += c.recording->bytes();
      return n;
    };
    while (recordings_.size() > 1 && (recordings_.size() > kMaxRecordings || total() > kMaxRecordingsBytes))
      recordings_.erase(recordings_.begin());
    why_not_.clear();
  } else {
    why_not_ = again ? "its replay did not give its outcome" : "its replay failed";
    NKIA_LOG_DEBUG("kernel call: run {} is not replayed: {}", i, why_not_);
  }
  return outcome;
}

}  // namespace nki_agent
