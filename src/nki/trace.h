// nki/trace.h — the record of a kernel's execution: every instruction with its engine, opcode and
// sub-ops (nki/opcodes.h), operands (memory, partition range, access pattern, dtype, bytes) and kernel source line. The
// cost model schedules this; nothing here knows about time.
//
// A trace keeps at most kMaxTraceRecords records: later instructions are counted (dropped()) but
// not stored, so a kernel that issues instructions without end cannot exhaust memory, and the
// trace's wire form between a worker and the host stays bounded (runtime/kernel_call.h).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnostic.h"
#include "nki/nki_tensor.h"
#include "nki/opcodes.h"

namespace nki_agent {

struct OperandRecord {
  std::string tensor;      // the tensor's name
  uint64_t tensor_id = 0;  // the tensor's identity within the trace (NkiTensor::id); 0: unknown
  Buffer buffer = Buffer::kSbuf;
  DType dtype = DType::kFloat32;
  Shape shape;
  Strides strides;     // in elements
  int64_t offset = 0;  // first element, in elements from the tensor's start
  int64_t partitions = 0;
  int64_t start_partition = 0;
  int64_t bytes = 0;  // total bytes the operand covers
  bool is_write = false;
};

struct InstructionRecord {
  Engine engine = Engine::kVector;
  InstrOp op;  // the opcode and its sub-ops
  std::vector<OperandRecord> operands;
  SourceLoc loc;
  int64_t elements = 0;  // elements the engine processes (the output's), for the cost model

  Opcode opcode() const { return op.opcode; }
  // "dma_copy", "tensor_tensor:add", "activation:exp", ... (instruction_text)
  std::string opcode_text() const { return instruction_text(op); }
};

OperandRecord record_operand(const Access& a, bool is_write);

inline constexpr size_t kMaxTraceRecords = 2'000'000;

class Trace {
 public:
  // Tensor identities are renumbered 1, 2, ... in order of first appearance, so that a trace does
  // not depend on what else the process ran.
  void add(InstructionRecord r) {
    if (!recording_) {
      ++unrecorded_;
      return;
    }
    if (records_.size() >= kMaxTraceRecords) {
      ++dropped_;
      return;
    }
    for (OperandRecord& o : r.operands)
      if (o.tensor_id != 0) {
        auto [it, fresh] = ids_.try_emplace(o.tensor_id, next_id_);
        if (fresh) ++next_id_;
        o.tensor_id = it->second;
      }
    records_.push_back(std::move(r));
  }
  // Appends another trace's records (and its dropped count), within the cap; its tensors stay
  // distinct from this trace's (another launch allocates its own).
  void append(Trace&& other);
  // Counts instructions that were executed but not stored (the cap); set by the wire decoder too.
  void add_dropped(int64_t n) { dropped_ += n; }
  const std::vector<InstructionRecord>& records() const { return records_; }
  std::vector<InstructionRecord>& mutable_records() { return records_; }
  size_t size() const { return records_.size(); }
  int64_t dropped() const { return dropped_; }
  bool truncated() const { return dropped_ > 0; }
  // false: add() keeps nothing, and instructions build no operand records for it (a run whose trace
  // nobody reads: verification). The checks an instruction makes do not depend on it.
  bool recording() const { return recording_; }
  // Instructions added, kept or not: the launch's instruction clock.
  int64_t issued() const { return static_cast<int64_t>(records_.size()) + dropped_ + unrecorded_; }
  void set_recording(bool on) { recording_ = on; }
  // One object per record: engine, opcode, operands (tensor, tensor_id, buffer, dtype, shape, strides, offset,
  // partitions, start_partition, bytes, is_write), elements, file, line.
  nlohmann::json to_json() const;

 private:
  std::vector<InstructionRecord> records_;
  int64_t dropped_ = 0;
  std::unordered_map<uint64_t, uint64_t> ids_;  // a tensor's identity -> its number in this trace
  uint64_t next_id_ = 1;
  bool recording_ = true;
  int64_t unrecorded_ = 0;  // added while not recording
};

// What a trace adds up to: instructions per engine, the bytes DMA queues wrote, and the elements
// the engines processed (the records' `elements`). Counts cover the stored records only; a
// truncated trace says so.
struct TraceSummary {
  int64_t instructions = 0;
  int64_t per_engine[kNumEngines] = {};  // indexed by Engine
  int64_t dma_bytes = 0;                 // bytes written by dma instructions (their destinations)
  int64_t elements = 0;
  int64_t dropped = 0;
};
TraceSummary summarize(const Trace& trace);
nlohmann::json summary_to_json(const TraceSummary& s);

}  // namespace nki_agent
