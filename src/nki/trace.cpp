#include "nki/trace.h"

#include <nlohmann/json.hpp>

namespace nki_agent {

std::string_view engine_name(Engine e) {
  switch (e) {
    case Engine::kTensor: return "tensor";
    case Engine::kVector: return "vector";
    case Engine::kScalar: return "scalar";
    case Engine::kGpSimd: return "gpsimd";
    case Engine::kDma: return "dma";
  }
  return "?";
}

OperandRecord record_operand(const Access& a, bool is_write) {
  OperandRecord r;
  r.tensor = a.tensor->name;
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
                     {"buffer", buffer_name(o.buffer)},
                     {"dtype", dtype_name(o.dtype)},
                     {"shape", o.shape},
                     {"strides", o.strides},
                     {"offset", o.offset},
                     {"partitions", o.partitions},
                     {"start_partition", o.start_partition},
                     {"bytes", o.bytes},
                     {"write", o.is_write}});
    out.push_back({{"engine", engine_name(r.engine)},
                   {"opcode", r.opcode},
                   {"operands", ops},
                   {"elements", r.elements},
                   {"line", r.loc.line},
                   {"file", r.loc.file}});
  }
  return out;
}

}  // namespace nki_agent
