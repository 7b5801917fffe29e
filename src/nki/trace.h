// nki/trace.h — the record of a kernel's execution: every instruction with its engine, opcode,
// operands (memory, partition range, access pattern, dtype, bytes) and kernel source line. The
// cost model schedules this; nothing here knows about time.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnostic.h"
#include "nki/nki_tensor.h"

namespace nki_agent {

// The NeuronCore's engines, and the DMA queues that move data between memories.
enum class Engine : uint8_t { kTensor, kVector, kScalar, kGpSimd, kDma };
std::string_view engine_name(Engine e);  // "tensor" (PE), "vector" (DVE), "scalar" (ACT), "gpsimd" (POOL), "dma"

struct OperandRecord {
  std::string tensor;  // the tensor's name
  Buffer buffer = Buffer::kSbuf;
  DType dtype = DType::kFloat32;
  Shape shape;
  Strides strides;  // in elements
  int64_t offset = 0;  // first element, in elements from the tensor's start
  int64_t partitions = 0;
  int64_t start_partition = 0;
  int64_t bytes = 0;  // total bytes the operand covers
  bool is_write = false;
};

struct InstructionRecord {
  Engine engine = Engine::kVector;
  std::string opcode;  // "dma_copy", "tensor_tensor:add", "activation:exp", ...
  std::vector<OperandRecord> operands;
  SourceLoc loc;
  int64_t elements = 0;  // elements the engine processes (the output's), for the cost model
};

OperandRecord record_operand(const Access& a, bool is_write);

class Trace {
 public:
  void add(InstructionRecord r) { records_.push_back(std::move(r)); }
  const std::vector<InstructionRecord>& records() const { return records_; }
  size_t size() const { return records_.size(); }
  nlohmann::json to_json() const;

 private:
  std::vector<InstructionRecord> records_;
};

}  // namespace nki_agent
