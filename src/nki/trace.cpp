#include "nki/trace.h"

#include <algorithm>
#include <iterator>

#include <nlohmann/json.hpp>

namespace nki_agent {

OperandRecord record_operand(const Access& a, bool is_write) {
  OperandRecord r;
  r.tensor = a.tensor->name;
  r.tensor_id = a.tensor->id;
  r.buffer = a.buffer();
  r.dtype = a.dtype();
  r.shape = a.shape();
  r.strides = a.view.strides();
  r.offset = a.view.offset() - a.tensor->data.offset();
  r.partitions = buffer_is_on_chip(a.buffer()) ? a.partitions() : 0;
  r.start_partition = buffer_is_on_chip(a.buffer()) ? a.start_partition() : 0;
  r.bytes = a.view.nbytes();
  r.is_write = is_write;
  return r;
}

nlohmann::json Trace::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : records_) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& o : r.operands)
      ops.push_back({{"tensor", o.tensor},
                     {"tensor_id", o.tensor_id},
                     {"buffer", buffer_name(o.buffer)},
                     {"dtype", dtype_name(o.dtype)},
                     {"shape", o.shape},
                     {"strides", o.strides},
                     {"offset", o.offset},
                     {"partitions", o.partitions},
                     {"start_partition", o.start_partition},
                     {"bytes", o.bytes},
                     {"is_write", o.is_write}});
    out.push_back({{"engine", engine_name(r.engine)},
                   {"opcode", r.opcode_text()},
                   {"operands", ops},
                   {"elements", r.elements},
                   {"line", r.loc.line},
                   {"file", r.loc.file}});
  }
  return out;
}

void Trace::append(Trace&& other) {
  const size_t room = kMaxTraceRecords - std::min(kMaxTraceRecords, records_.size());
  const size_t take = std::min(room, other.records_.size());
  const uint64_t base = next_id_ - 1;  // other's tensors are numbered after this trace's
  for (size_t k = 0; k < take; ++k) {
    for (OperandRecord& o : other.records_[k].operands)
      if (o.tensor_id != 0) {
        o.tensor_id += base;
        next_id_ = std::max(next_id_, o.tensor_id + 1);
      }
    records_.push_back(std::move(other.records_[k]));
  }
  dropped_ += other.dropped_ + static_cast<int64_t>(other.records_.size() - take);
  other.records_.clear();
  other.dropped_ = 0;
}

TraceSummary summarize(const Trace& trace) {
  TraceSummary s;
  s.dropped = trace.dropped();
  for (const auto& r : trace.records()) {
    ++s.instructions;
    ++s.per_engine[static_cast<int>(r.engine)];
    s.elements += r.elements;
    if (r.engine == Engine::kDma)
      for (const auto& o : r.operands)
        if (o.is_write) s.dma_bytes += o.bytes;
  }
  return s;
}

nlohmann::json summary_to_json(const TraceSummary& s) {
  nlohmann::json engines = nlohmann::json::object();
  for (int e = 0; e < kNumEngines; ++e) engines[std::string(engine_name(static_cast<Engine>(e)))] = s.per_engine[e];
  return {{"instructions", s.instructions}, {"per_engine", engines},      {"dma_bytes", s.dma_bytes},
          {"elements", s.elements},         {"truncated", s.dropped > 0}, {"dropped", s.dropped}};
}

}  // namespace nki_agent
