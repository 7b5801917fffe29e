// Trace documents back into Traces (trace_json.h): the inverse of Trace::to_json, validating as
// it goes, since the file may come from anywhere.
#include "cost/trace_json.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace nki_agent {

namespace {

tl::unexpected<Diagnostic> bad(size_t index, std::string_view what) {
  return fail("nkia_trace_invalid", fmt::format("trace record {}: {}", index, what),
              "give a document written by `nki-agent check --trace` or `run --trace`");
}

std::optional<Buffer> buffer_named(std::string_view s) {
  for (Buffer b : {Buffer::kSharedHbm, Buffer::kPrivateHbm, Buffer::kSbuf, Buffer::kPsum})
    if (buffer_name(b) == s) return b;
  return std::nullopt;
}

bool int_array(const nlohmann::json& j, std::vector<int64_t>& out) {
  if (!j.is_array() || j.size() > 64) return false;
  out.clear();
  for (const auto& v : j) {
    if (!v.is_number_integer()) return false;
    out.push_back(v.get<int64_t>());
  }
  return true;
}

}  // namespace

Result<Trace> trace_from_json(const nlohmann::json& doc) {
  const nlohmann::json* arr = &doc;
  if (doc.is_object()) {
    auto it = doc.find("trace");
    if (it == doc.end())
      return fail("nkia_trace_invalid", "the document has no \"trace\" array", "give a trace document");
    arr = &*it;
  }
  if (!arr->is_array()) return fail("nkia_trace_invalid", "\"trace\" is not an array", "give a trace document");
  if (arr->size() > kMaxTraceRecords)
    return fail("nkia_trace_invalid",
                fmt::format("the trace has {} records, more than {}", arr->size(), kMaxTraceRecords),
                "record a smaller run");
  Trace trace;
  for (size_t i = 0; i < arr->size(); ++i) {
    const nlohmann::json& r = (*arr)[i];
    if (!r.is_object()) return bad(i, "not an object");
    InstructionRecord rec;
    auto eng = r.find("engine");
    if (eng == r.end() || !eng->is_string()) return bad(i, "no engine");
    auto e = engine_from_name(eng->get<std::string>());
    if (!e) return bad(i, fmt::format("unknown engine '{}'", eng->get<std::string>()));
    rec.engine = *e;
    auto op = r.find("opcode");
    if (op == r.end() || !op->is_string()) return bad(i, "no opcode");
    const auto instr = parse_instruction(op->get<std::string>());
    if (!instr) return bad(i, fmt::format("unknown opcode '{}'", op->get<std::string>()));
    rec.op = *instr;
    if (auto el = r.find("elements"); el != r.end() && el->is_number_integer()) rec.elements = el->get<int64_t>();
    if (auto f = r.find("file"); f != r.end() && f->is_string()) rec.loc.file = f->get<std::string>();
    if (auto l = r.find("line"); l != r.end() && l->is_number_integer())
      rec.loc.line = static_cast<int>(l->get<int64_t>());
    auto ops = r.find("operands");
    if (ops == r.end() || !ops->is_array() || ops->size() > 64) return bad(i, "no operands array");
    for (const auto& o : *ops) {
      if (!o.is_object()) return bad(i, "an operand is not an object");
      OperandRecord orec;
      auto b = o.find("buffer");
      auto d = o.find("dtype");
      if (b == o.end() || !b->is_string() || !buffer_named(b->get<std::string>())) return bad(i, "an operand's buffer");
      if (d == o.end() || !d->is_string() || !dtype_from_name(d->get<std::string>()))
        return bad(i, "an operand's dtype");
      orec.buffer = *buffer_named(b->get<std::string>());
      orec.dtype = *dtype_from_name(d->get<std::string>());
      std::vector<int64_t> shape, strides;
      auto sh = o.find("shape");
      auto st = o.find("strides");
      if (sh == o.end() || !int_array(*sh, shape)) return bad(i, "an operand's shape");
      if (st == o.end() || !int_array(*st, strides) || strides.size() != shape.size())
        return bad(i, "an operand's strides");
      for (int64_t n : shape)
        if (n < 0) return bad(i, "a negative dimension");
      orec.shape = Shape(shape.begin(), shape.end());
      orec.strides = Strides(strides.begin(), strides.end());
      for (const char* k : {"offset", "partitions", "start_partition", "bytes"}) {
        auto v = o.find(k);
        if (v == o.end() || !v->is_number_integer()) return bad(i, fmt::format("an operand's {}", k));
      }
      orec.offset = o["offset"].get<int64_t>();
      orec.partitions = o["partitions"].get<int64_t>();
      orec.start_partition = o["start_partition"].get<int64_t>();
      orec.bytes = o["bytes"].get<int64_t>();
      if (orec.partitions < 0 || orec.start_partition < 0 || orec.start_partition > 4096 || orec.bytes < 0)
        return bad(i, "an operand's partitions or bytes are out of range");
      if (auto w = o.find("is_write"); w != o.end() && w->is_boolean()) orec.is_write = w->get<bool>();
      if (auto t = o.find("tensor"); t != o.end() && t->is_string()) orec.tensor = t->get<std::string>();
      if (auto t = o.find("tensor_id"); t != o.end() && t->is_number_unsigned()) orec.tensor_id = t->get<uint64_t>();
      rec.operands.push_back(std::move(orec));
    }
    trace.add(std::move(rec));
  }
  if (doc.is_object())
    if (auto s = doc.find("summary"); s != doc.end() && s->is_object())
      if (auto dr = s->find("dropped"); dr != s->end() && dr->is_number_integer() && dr->get<int64_t>() > 0)
        trace.add_dropped(dr->get<int64_t>());
  return trace;
}

Result<Trace> load_trace_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return fail("nkia_trace_unreadable", fmt::format("cannot read the trace {}", path),
                "write one with `nki-agent check KERNEL --trace FILE`");
  std::stringstream ss;
  ss << f.rdbuf();
  auto doc = nlohmann::json::parse(ss.str(), nullptr, false);
  if (doc.is_discarded())
    return fail("nkia_trace_invalid", fmt::format("{} is not JSON", path),
                "give a document written by `nki-agent check --trace` or `run --trace`");
  return trace_from_json(doc);
}

}  // namespace nki_agent
