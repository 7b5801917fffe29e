// runtime/python/replay.h — one run of a kernel recorded as the instructions it issued, and replayed
// on other inputs of the same types and shapes without running the kernel's Python again: the runs
// after the first of a call with several runs (a verification's seeds).
//
// A kernel cannot read its tensors' values while it is traced (nkia_trace_time_value_read), so what
// it issues — which instructions, on which parts of which tensors, in which order — follows from the
// shapes, types and arguments alone; on the device a kernel is compiled once and the compiled program
// runs on every input. Replaying the recorded instructions through the core (nki/isa.h: each one's
// checks and numerics, as a run executes them) on new inputs gives what running the kernel again
// gives, without the Python of every instruction (a convolution issues tens of thousands of small
// matmuls).
//
// A recording holds the kernel's tensors as slots — its inputs, then each tensor it created, with what
// its creation gave it — and each instruction as a function of its operands, every operand a slot and
// the geometry of the view. The launch's own rules (loops, scopes, capacities, placements) depend on
// no value: the recorded run checked them, and a replay does not check them again. What a recording
// cannot replay exactly taints it: an instruction that is not recorded (random numbers, collectives,
// device_print, an offset read from a tile, ...: whatever reaches the core through exec_or_raise), an
// operand whose tensor is no slot (an alias read as another type), a second launch, an output that is
// no slot of the launch.
//
// RunSeries trusts a recording only after checking it: a replay of the recorded run's own inputs must
// give its outputs bit for bit and the same stored elements. Each later replay must then raise
// exactly the warnings that check raised, and must not fail; otherwise that run runs in Python, which
// gives the run's real outcome whatever the replay missed.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nki/isa.h"
#include "runtime/kernel_call.h"

namespace nki_agent {

// A recorded instruction: the core call, given the replay's context and its operands rebuilt over
// the replay's tensors, in the order they were recorded.
using ReplayFn = std::function<Result<void>(ExecContext&, std::span<const Access>)>;

class Recording {
 public:
  // ---- while the recorded run runs (the kernel host's hooks) ----
  // A kernel argument, in argument order.
  void add_input(const std::shared_ptr<NkiTensor>& t);
  // A tensor the kernel created, as its creation left it (a later SPMD instance's shared_hbm tensor,
  // the first instance's, is no new one).
  void add_created(const std::shared_ptr<NkiTensor>& t);
  // An instruction the run is about to execute on `operands`.
  void add_instruction(const ExecContext& ctx, std::span<const Access> operands, ReplayFn fn);
  // Something the recording cannot replay exactly happened; the first reason is kept.
  void taint(std::string_view why);
  // A launch began: a run's second launch taints the recording.
  void begin_launch();
  // The run ended well: its outputs (in return order; null for one that is no kernel tensor), what it
  // printed and the warnings it raised.
  void finish(const std::vector<std::shared_ptr<NkiTensor>>& outputs, const KernelOutcome& outcome);

  // ---- afterwards ----
  bool replayable() const { return finished_ && why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }
  size_t instructions() const { return instructions_; }
  size_t bytes() const { return bytes_; }  // about what its steps take
  // Whether `call` (one run) passes inputs of the recorded run's types and shapes, with its options.
  bool matches(const KernelCall& call) const;

  // Replays the recording on `call`'s inputs: the outcome a run of the kernel gives, with the
  // warnings the replayed instructions raised in `raised`; nullopt when an instruction failed (the
  // run then belongs to Python, which reports the failure as a run does).
  std::optional<KernelOutcome> replay(const KernelCall& call, std::vector<Diagnostic>& raised) const;

 private:
  struct View {
    int slot = -1;
    DType dtype = DType::kFloat32;
    Shape shape;
    Strides strides;
    int64_t offset = 0;  // elements past the start of the slot's data
  };
  struct Created {  // what a created tensor held when the kernel created it
    Shape shape;
    DType dtype = DType::kFloat32;
    Buffer buffer = Buffer::kSbuf;
    std::string name;
    int blocks = 0;
    int64_t created_tag = 0;
    int64_t scope = 0;
  };
  struct Step {
    int create = -1;  // >= 0: this step creates the slot; else it runs fn
    ReplayFn fn;
    std::vector<View> operands;
    int64_t affine_tag = 0;
    std::vector<int> release;  // slots used for the last time by this step
  };
  struct Input {
    DType dtype = DType::kFloat32;
    Shape shape;
    bool immutable = false;
    std::string name;
  };

  int slot_of(const NkiTensor& t) const;
  std::optional<KernelOutcome> replay_steps(const KernelCall& call, std::vector<Diagnostic>& raised) const;

  std::unordered_map<uint64_t, int> slots_;             // NkiTensor::id -> slot (while recording)
  std::vector<Input> inputs_;                           // slots 0 .. inputs_.size() - 1
  std::vector<std::shared_ptr<NkiTensor>> input_refs_;  // while recording: the run's inputs
  std::vector<Created> created_;                        // by slot, past the inputs
  std::vector<Step> steps_;
  std::vector<int> outputs_;
  std::string printed_;
  std::vector<Diagnostic> warnings_;
  std::string why_not_;
  const TargetSpec* target_ = nullptr;  // the launch's target (its platform_target, when it names one)
  size_t instructions_ = 0;
  size_t bytes_ = 0;  // about what steps_ takes
  int launches_ = 0;
  bool finished_ = false;
};

// The recording of the run on this thread, or null when it is not recorded.
Recording* current_recording();

// Runs the instruction `fn` on `operands` now, recording it first when the run is recorded.
template <size_t N, class F>
Result<void> issue(ExecContext& ctx, std::array<Access, N> operands, F&& fn) {
  if (Recording* r = current_recording()) r->add_instruction(ctx, operands, ReplayFn(fn));
  return fn(ctx, std::span<const Access>(operands));
}

// The same for an instruction whose optional operands make their number vary.
template <class F>
Result<void> issue(ExecContext& ctx, std::vector<Access> operands, F&& fn) {
  if (Recording* r = current_recording()) r->add_instruction(ctx, operands, ReplayFn(fn));
  return fn(ctx, std::span<const Access>(operands));
}

// The runs of one call with several runs (KernelCall::runs), one after another in this process: each
// in Python, or replayed from the recording of an earlier run of the same shapes once that recording
// passed its check (see above). A run is recorded when a later run of the call has its shapes. A call that computes no
// values, keeps a trace, or has a host side is run in Python throughout.
class RunSeries {
 public:
  explicit RunSeries(const KernelCall& call) : call_(call) {}
  Result<KernelOutcome> run(int i);
  int replayed() const { return replayed_; }
  // Why the last run recorded is not replayed (empty when it is, or when none was recorded).
  const std::string& why_not() const { return why_not_; }

 private:
  // A recording that passed its check, with the warnings its check's replay raised.
  struct Checked {
    std::unique_ptr<Recording> recording;
    std::vector<Diagnostic> raised;
  };
  // Of different shapes, at most this many and this much memory (about); the oldest goes first.
  static constexpr size_t kMaxRecordings = 4;
  static constexpr size_t kMaxRecordingsBytes = size_t{128} << 20;

  bool worth_recording(int i, const KernelCall& one) const;
  const Checked* find(const KernelCall& one) const;

  const KernelCall& call_;
  std::vector<Checked> recordings_;
  std::string why_not_;
  int replayed_ = 0;
};

}  // namespace nki_agent
