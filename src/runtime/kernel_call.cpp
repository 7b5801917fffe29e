#include "runtime/kernel_call.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "core/huge_pages.h"
#include "core/utf8.h"
#include "nki/target.h"
#include "runtime/python_source.h"
#include "tensor/npy.h"

namespace fs = std::filesystem;

namespace nki_agent {

namespace {

constexpr uint64_t kMaxHeaderBytes = 64 << 20;  // sources and names; far above any real kernel
// v as the 8 little-endian bytes at out[at, at + 8).
void set_u64(std::string& out, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// The 8-byte little-endian number set_u64 wrote at the start of `bytes` (which holds at least 8).
uint64_t get_u64(std::string_view bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return n;
}

// The index in `shared` of the buffer a contiguous tensor's storage lives in, else -1.
int attachment_index(const Tensor& t, const Attachments& shared) {
  if (!t.defined() || !t.is_contiguous() || !t.storage()->external()) return -1;
  for (size_t k = 0; k < shared.size(); ++k)
    if (shared[k].get() == t.storage()->external().get()) return static_cast<int>(k);
  return -1;
}

// How a message being built grows: a std::string copies everything into itself; a Reply
// (runtime/reply.h) points to a contiguous array's elements where they lie instead, when there are
// enough of them to be worth a write of their own.
constexpr int64_t kReplySpanMinBytes = 64 << 10;
// Where an inline array's .npy image starts in a message (see pack_into).
constexpr size_t kArrayAlign = 64;
void put_bytes(std::string& out, std::string_view bytes) {
  out.append(bytes);
}
void put_bytes(Reply& out, std::string_view bytes) {
  out.append(bytes);
}
void put_npy(std::string& out, const Tensor& t) {
  npy_serialize_append(t, out);
}
void put_npy(Reply& out, const Tensor& t) {
  if (std::string head = t.nbytes() >= kReplySpanMinBytes ? npy_header_before_storage(t) : std::string();
      !head.empty()) {
    out.append(head);
    out.append_span(t.data(), static_cast<size_t>(t.nbytes()), t.storage());
    return;
  }
  std::string image;
  npy_serialize_append(t, image);
  out.append(image);
}
// Room for `n` more bytes, reserved once (only a string holds them all).
void make_room(std::string& out, size_t n) {
  reserve_on_huge_pages(out, out.size() + n);
}
void make_room(Reply&, size_t) {}

// `extra`: one more binary section after the arrays (the trace); its offset goes to
// header[extra_key]["offset"] and its size to ["size"].
// `shared`: arrays that live in one of these buffers travel as references into it (index, where
// their storage begins, its size, the element offset, dtype and shape); the others as .npy images.
// pack(), appended to `out`.
template <class Out>
void pack_into(Out& out, const nlohmann::json& header, const std::vector<Tensor>& arrays, const char* key,
               const char* extra_key = nullptr, std::string_view extra = {}, const Attachments& shared = {}) {
  // The header first (it says where each array lies), then every array serialized straight into
  // the message: sized once, no copies in between (outputs are tens of MB).
  // Each inline array's .npy image (its header a multiple of 64 bytes) starts on a 64-byte
  // boundary counted from the start of `out`: a reader that holds the message in aligned memory
  // can view the elements where they lie (npy_view) instead of copying them.
  nlohmann::json h = header;
  h[key] = nlohmann::json::array();
  std::vector<std::pair<const Tensor*, size_t>> inline_arrays;  // with their offsets
  size_t blob_bytes = 0;
  for (const Tensor& t : arrays) {
    if (int k = attachment_index(t, shared); k >= 0) {
      h[key].push_back({{"attachment", k},
                        {"base", t.storage()->external_offset()},
                        {"bytes", t.storage()->nbytes()},
                        {"offset", t.offset()},
                        {"dtype", dtype_name(t.dtype())},
                        {"shape", t.shape()}});
      continue;
    }
    const size_t size = npy_serialized_size(t);
    blob_bytes = (blob_bytes + kArrayAlign - 1) / kArrayAlign * kArrayAlign;
    h[key].push_back({{"offset", blob_bytes}, {"size", size}});
    inline_arrays.emplace_back(&t, blob_bytes);
    blob_bytes += size;
  }
  if (extra_key) {
    h[extra_key]["offset"] = blob_bytes;
    h[extra_key]["size"] = extra.size();
    blob_bytes += extra.size();
  }
  std::string text = h.dump();
  text.append((kArrayAlign - (out.size() + 8 + text.size()) % kArrayAlign) % kArrayAlign, ' ');
  make_room(out, 8 + text.size() + blob_bytes);
  std::string length(8, '\0');
  set_u64(length, 0, text.size());
  put_bytes(out, length);
  put_bytes(out, text);
  size_t written = 0;
  for (const auto& [t, offset] : inline_arrays) {
    if (offset > written) put_bytes(out, std::string(offset - written, '\0'));
    put_npy(out, *t);
    written = offset + npy_serialized_size(*t);
  }
  if (extra_key) put_bytes(out, extra);
}

std::string pack(const nlohmann::json& header, const std::vector<Tensor>& arrays, const char* key,
                 const char* extra_key = nullptr, std::string_view extra = {}, const Attachments& shared = {}) {
  std::string out;
  pack_into(out, header, arrays, key, extra_key, extra, shared);
  return out;
}

Diagnostic bad_wire(const std::string& why) {
  return Diagnostic::error("nkia_worker_protocol", "malformed message between host and worker: " + why,
                           "this is a bug in nki-agent, or a worker was compromised; please report it");
}

struct Unpacked {
  nlohmann::json header;
  std::vector<Tensor> arrays;
  std::string_view blobs;  // the binary sections, into the caller's bytes
};

// An array entry that refers to shared memory (see pack).
Result<Tensor> shared_array(const nlohmann::json& a, const Attachments& shared) {
  for (const char* f : {"attachment", "base", "bytes", "offset"})
    if (!a.contains(f) || !a[f].is_number_unsigned()) return fail(bad_wire("bad shared array entry"));
  if (!a.contains("dtype") || !a["dtype"].is_string() || !a.contains("shape") || !a["shape"].is_array() ||
      a["shape"].size() > kMaxTraceRank)
    return fail(bad_wire("bad shared array entry"));
  const uint64_t k = a["attachment"], base = a["base"], nbytes = a["bytes"], offset = a["offset"];
  if (k >= shared.size()) return fail(bad_wire("an array in shared memory that did not come"));
  auto dtype = dtype_from_name(a["dtype"].get<std::string>());
  if (!dtype) return fail(bad_wire("an unknown dtype"));
  Shape shape;
  int64_t numel = 1;
  for (const auto& d : a["shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 40)) return fail(bad_wire("a bad dimension"));
    shape.push_back(d.get<int64_t>());
    numel = numel > 0 && shape.back() > (INT64_MAX / 16) / numel ? -1 : numel * shape.back();
    if (numel < 0) return fail(bad_wire("an array too large"));
  }
  const auto size = static_cast<uint64_t>(shared[k]->byte_size());
  const auto item = static_cast<uint64_t>(dtype_size(*dtype));
  if (base % 64 != 0 || base > size || nbytes > size - base || offset > nbytes / item ||
      static_cast<uint64_t>(numel) > nbytes / item - offset)
    return fail(bad_wire("an array beyond its shared memory"));
  auto storage = std::make_shared<Storage>(shared[k], static_cast<int64_t>(base), static_cast<int64_t>(nbytes));
  return Tensor(std::move(storage), *dtype, shape, contiguous_strides(shape), static_cast<int64_t>(offset));
}

// With `memory` (which holds `bytes`), inline arrays view it where their elements lie as a
// tensor's would (npy_view).
Result<Unpacked> unpack(std::string_view bytes, const char* key, const Attachments& shared = {},
                        const std::shared_ptr<ExternalMemory>& memory = nullptr) {
  if (bytes.size() < 8) return fail(bad_wire("shorter than its length prefix"));
  const uint64_t n = get_u64(bytes);
  if (n > kMaxHeaderBytes || n > bytes.size() - 8) return fail(bad_wire("header length beyond the message"));
  Unpacked u;
  u.header = nlohmann::json::parse(bytes.substr(8, n), nullptr, false);
  if (u.header.is_discarded() || !u.header.is_object()) return fail(bad_wire("header is not a JSON object"));
  std::string_view blobs = bytes.substr(8 + n);
  u.blobs = blobs;
  auto it = u.header.find(key);
  if (it == u.header.end() || !it->is_array()) return fail(bad_wire(fmt::format("no '{}' list", key)));
  for (const auto& a : *it) {
    if (a.is_object() && a.contains("attachment")) {
      auto t = shared_array(a, shared);
      if (!t) return fail(t.error());
      u.arrays.push_back(std::move(*t));
      continue;
    }
    if (!a.is_object() || !a.contains("offset") || !a.contains("size") || !a["offset"].is_number_unsigned() ||
        !a["size"].is_number_unsigned())
      return fail(bad_wire("bad array entry"));
    const uint64_t off = a["offset"], size = a["size"];
    if (off > blobs.size() || size > blobs.size() - off) return fail(bad_wire("array beyond the message"));
    auto t = memory ? npy_view(memory, blobs.data() + off - reinterpret_cast<const char*>(memory->bytes()),
                               static_cast<int64_t>(size), "array")
                    : npy_parse({reinterpret_cast<const uint8_t*>(blobs.data() + off), size}, "array");
    if (!t) return fail(t.error());
    u.arrays.push_back(std::move(*t));
  }
  return u;
}

template <typename T>
bool get_to(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return false;
  try {
    out = it->get<T>();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// ---- the trace's binary section ------------------------------------------------------------------

class TraceWriter {
 public:
  void u8(uint8_t v) { out_ += static_cast<char>(v); }
  void uv(uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  void sv(int64_t v) { uv((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void str(const std::string& s) {
    auto [it, added] = index_.try_emplace(s, static_cast<uint64_t>(strings_.size()));
    if (added) strings_.push_back(s);
    uv(it->second);
  }
  // An instruction as its text form (nki/opcodes.h), formatted once per distinct instruction.
  void instr(const InstrOp& op) {
    auto [it, added] = instr_index_.try_emplace(op.key(), 0);
    if (added) {
      const std::string text = instruction_text(op);
      auto [s, fresh] = index_.try_emplace(text, static_cast<uint64_t>(strings_.size()));
      if (fresh) strings_.push_back(text);
      it->second = s->second;
    }
    uv(it->second);
  }
  std::string& bytes() { return out_; }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::string out_;
  std::map<std::string, uint64_t> index_;
  std::vector<std::string> strings_;
  std::unordered_map<uint32_t, uint64_t> instr_index_;  // InstrOp::key() -> string index
};

// Reads what TraceWriter wrote; the first malformed value sets the error and every read after it
// returns 0, so callers check error() once per record.
class TraceReader {
 public:
  TraceReader(std::string_view in, const std::vector<std::string>& strings) : in_(in), strings_(strings) {}
  uint8_t u8() {
    if (pos_ >= in_.size()) return bad("ends inside a record");
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint64_t uv() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return bad("ends inside a number");
      const uint8_t b = static_cast<uint8_t>(in_[pos_++]);
      if (shift == 63 && b > 1) return bad("a number beyond 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return bad("a number beyond 64 bits");
  }
  int64_t sv() {
    const uint64_t z = uv();
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  // A non-negative value no larger than `max`.
  int64_t size(int64_t max, const char* what) {
    const int64_t v = sv();
    if (v < 0 || v > max) {
      bad(what);
      return 0;
    }
    return v;
  }
  const std::string& str() {
    static const std::string kEmpty;
    const uint64_t i = uv();
    if (i >= strings_.size()) {
      bad("a string index outside the table");
      return kEmpty;
    }
    return strings_[i];
  }
  // An instruction's text form read back (parsed once per string); nullopt, with `text` set, when
  // the string names no instruction; InstrOp() after a malformed index (error() tells).
  std::optional<InstrOp> instr(std::string_view& text) {
    const uint64_t i = uv();
    if (i >= strings_.size()) {
      bad("a string index outside the table");
      return InstrOp();
    }
    if (parsed_.size() != strings_.size()) parsed_.resize(strings_.size());
    auto& [done, op] = parsed_[i];
    if (!done) op = parse_instruction(strings_[i]);
    done = true;
    text = strings_[i];
    return op;
  }
  bool at_end() const { return pos_ == in_.size(); }
  const std::string& error() const { return error_; }

 private:
  uint8_t bad(const char* why) {
    if (error_.empty()) error_ = why;
    pos_ = in_.size();
    return 0;
  }
  std::string_view in_;
  size_t pos_ = 0;
  const std::vector<std::string>& strings_;
  std::vector<std::pair<bool, std::optional<InstrOp>>> parsed_;  // by string index
  std::string error_;
};

constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

// ---- tensor specs: {"name", "dtype", "shape"} ------------------------------------------------------

nlohmann::json specs_to_json(const std::vector<TensorSpec>& specs) {
  nlohmann::json out = nlohmann::json::array();
  for (const TensorSpec& s : specs)
    out.push_back({{"name", s.name}, {"dtype", dtype_name(s.dtype)}, {"shape", s.shape}});
  return out;
}

// At most `max_elements` elements each (the element count must not overflow either).
Result<std::vector<TensorSpec>> specs_from_json(const nlohmann::json& j, int64_t max_elements, const char* what) {
  if (!j.is_array() || j.size() > kMaxTensorSpecs)
    return fail(bad_wire(fmt::format("'{}' is not a list of specs", what)));
  std::vector<TensorSpec> out;
  for (const auto& e : j) {
    TensorSpec s;
    std::string dtype;
    if (!e.is_object() || !get_to(e, "name", s.name) || !get_to(e, "dtype", dtype) || !e.contains("shape") ||
        !e["shape"].is_array() || e["shape"].size() > kMaxTraceRank)
      return fail(bad_wire(fmt::format("a malformed entry in '{}'", what)));
    auto t = dtype_from_name(dtype);
    if (!t) return fail(bad_wire(fmt::format("an unknown dtype in '{}'", what)));
    s.dtype = *t;
    int64_t numel = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(max_elements))
        return fail(bad_wire(fmt::format("a bad dimension in '{}'", what)));
      const auto n = d.get<int64_t>();
      if (n > 0 && numel > max_elements / n) return fail(bad_wire(fmt::format("a spec in '{}' is too large", what)));
      numel *= n;
      s.shape.push_back(n);
    }
    out.push_back(std::move(s));
  }
  return out;
}
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr size_t kMinRecordBytes = 7;  // engine, opcode, file, line, col, elements, operand count: a byte each at least

// The trace's header entry (without offset and size, which pack() adds) and its section.
std::pair<nlohmann::json, std::string> encode_trace(const Trace& trace) {
  TraceWriter w;
  for (const InstructionRecord& r : trace.records()) {
    w.u8(static_cast<uint8_t>(r.engine));
    w.instr(r.op);
    w.str(r.loc.file);
    w.sv(r.loc.line);
    w.sv(r.loc.col);
    w.sv(r.elements);
    w.uv(r.operands.size());
    for (const OperandRecord& o : r.operands) {
      w.str(o.tensor);
      w.uv(o.tensor_id);
      w.u8(static_cast<uint8_t>(o.buffer));
      w.u8(static_cast<uint8_t>(o.dtype));
      w.u8(o.is_write ? 1 : 0);
      w.uv(o.shape.size());
      for (int64_t d : o.shape) w.sv(d);
      w.uv(o.strides.size());
      for (int64_t d : o.strides) w.sv(d);
      w.sv(o.offset);
      w.sv(o.partitions);
      w.sv(o.start_partition);
      w.sv(o.bytes);
    }
  }
  nlohmann::json h = {{"records", trace.size()}, {"dropped", trace.dropped()}, {"strings", w.strings()}};
  return {std::move(h), std::move(w.bytes())};
}

Result<Trace> decode_trace(const nlohmann::json& h, std::string_view blobs) {
  uint64_t off = 0, size = 0, records = 0, dropped = 0;
  std::vector<std::string> strings;
  if (!h.is_object() || !get_to(h, "offset", off) || !get_to(h, "size", size) || !get_to(h, "records", records) ||
      !get_to(h, "dropped", dropped) || !h["offset"].is_number_unsigned() || !h["size"].is_number_unsigned() ||
      !h["records"].is_number_unsigned() || !h["dropped"].is_number_unsigned() || !get_to(h, "strings", strings))
    return fail(bad_wire("a trace field is missing or has the wrong type"));
  if (off > blobs.size() || size > blobs.size() - off) return fail(bad_wire("the trace lies beyond the message"));
  if (records > kMaxTraceRecords)
    return fail(bad_wire(fmt::format("a trace of {} records (at most {})", records, kMaxTraceRecords)));
  if (dropped > static_cast<uint64_t>(kMaxI64)) return fail(bad_wire("a trace's dropped count beyond 64 bits"));
  if (strings.size() > kMaxTraceStrings) return fail(bad_wire("a trace's string table is too large"));
  const std::string_view body = blobs.substr(off, size);
  if (records > body.size() / kMinRecordBytes) return fail(bad_wire("a trace's record count exceeds its bytes"));

  Trace t;
  t.add_dropped(static_cast<int64_t>(dropped));
  t.mutable_records().reserve(records);
  TraceReader in(body, strings);
  for (uint64_t i = 0; i < records; ++i) {
    InstructionRecord r;
    const uint8_t engine = in.u8();
    if (engine >= kNumEngines) return fail(bad_wire(fmt::format("trace record {}: unknown engine {}", i, engine)));
    r.engine = static_cast<Engine>(engine);
    std::string_view text;
    const std::optional<InstrOp> op = in.instr(text);
    if (!op) return fail(bad_wire(fmt::format("trace record {}: unknown opcode '{}'", i, text.substr(0, 64))));
    r.op = *op;
    r.loc.file = in.str();
    r.loc.line = static_cast<int>(in.size(kMaxInt, "a line number out of range"));
    r.loc.col = static_cast<int>(in.size(kMaxInt, "a column number out of range"));
    r.elements = in.size(kMaxI64, "a negative element count");
    const uint64_t nops = in.uv();
    if (nops > kMaxTraceOperands) return fail(bad_wire(fmt::format("trace record {}: {} operands", i, nops)));
    for (uint64_t k = 0; k < nops && in.error().empty(); ++k) {
      OperandRecord o;
      o.tensor = in.str();
      o.tensor_id = in.uv();
      const uint8_t buffer = in.u8(), dtype = in.u8(), write = in.u8();
      if (buffer > static_cast<uint8_t>(Buffer::kPsum) || dtype >= kNumDTypes || write > 1)
        return fail(bad_wire(fmt::format("trace record {}: an operand with an unknown buffer, dtype or flag", i)));
      o.buffer = static_cast<Buffer>(buffer);
      o.dtype = static_cast<DType>(dtype);
      o.is_write = write == 1;
      const uint64_t rank = in.uv();
      if (rank > kMaxTraceRank) return fail(bad_wire(fmt::format("trace record {}: an operand of rank {}", i, rank)));
      for (uint64_t d = 0; d < rank; ++d) o.shape.push_back(in.size(kMaxI64, "a negative dimension"));
      const uint64_t srank = in.uv();
      if (in.error().empty() && srank != rank)
        return fail(bad_wire(fmt::format("trace record {}: shape and strides differ in rank", i)));
      for (uint64_t d = 0; d < rank; ++d) o.strides.push_back(in.sv());
      o.offset = in.sv();
      o.partitions = in.size(kMaxI64, "a negative partition count");
      o.start_partition = in.size(kMaxI64, "a negative start partition");
      o.bytes = in.size(kMaxI64, "a negative byte count");
      r.operands.push_back(std::move(o));
    }
    if (!in.error().empty()) return fail(bad_wire(fmt::format("trace record {}: {}", i, in.error())));
    t.mutable_records().push_back(std::move(r));
  }
  if (!in.at_end()) return fail(bad_wire("bytes after the trace's last record"));
  return t;
}

}  // namespace

// ---- kernel files ------------------------------------------------------------------------------

static Result<std::string> read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return fail("nkia_kernel_unreadable", fmt::format("cannot read {}", p.string()));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// What a helper module that Python could not read holds instead: code that raises the SyntaxError
// Python would raise on importing it, at the first unreadable byte, with the Diagnostic's code and
// hint (_nkia/runner.py reads them from the exception). The raise stands on that byte's line (line
// 2 when it is line 1), which a traceback shows. A helper the kernel never imports costs nothing,
// as in Python.
static std::string unreadable_module(const std::string& rel, const Diagnostic& d) {
  auto lit = [](const std::string& s) { return nlohmann::json(s).dump(); };  // a valid Python literal
  const int line = std::max(d.loc.line, 1);
  std::string src = fmt::format("_e = SyntaxError({}, ({}, {}, {}, None)); _e.code = {}; _e.hint = {}",
                                lit(fmt::format("{} cannot be imported: {}", rel, d.message)), lit(rel), line,
                                d.loc.col, lit(d.code), lit(d.hint));
  src += std::string(static_cast<size_t>(std::max(line - 1, 1)), '\n');
  src += fmt::format("raise _e  # {}: the first unreadable byte is at line {}, column {}\n", rel, line, d.loc.col);
  return src;
}

// Reads one source file into kf.files[rel] (`where` names the folder in messages); `total` counts
// the bytes read so far. A helper module that cannot be read becomes one that raises on import.
static Result<void> add_source(KernelFiles& kf, const fs::path& p, const std::string& rel, const std::string& where,
                               int64_t& total) {
  // A module whose file name is not UTF-8 cannot be named in an import: it is not the kernel's.
  if (!is_utf8(rel)) return {};
  if (static_cast<int>(kf.files.size()) >= kMaxKernelFiles)
    return fail("nkia_kernel_too_large", fmt::format("more than {} Python files under {}", kMaxKernelFiles, where),
                "keep the kernel and its helper modules in a small folder of their own");
  auto bytes = read_text(p);
  if (!bytes) return fail(bytes.error());
  total += static_cast<int64_t>(bytes->size());
  if (total > kMaxKernelSourceBytes)
    return fail("nkia_kernel_too_large",
                fmt::format("more than {} MiB of Python under {}", kMaxKernelSourceBytes >> 20, where),
                "keep the kernel and its helper modules in a small folder of their own");
  auto text = python_source_text(*bytes, p.string());
  if (!text && rel == kf.main_path) {
    Diagnostic d = text.error();
    if (p.extension() != ".py" || bytes->find('\0') != std::string::npos)
      d.hint = fmt::format("{} does not look like Python source: give the kernel's .py file", p.filename().string());
    return fail(std::move(d));
  }
  kf.files[rel] = text ? std::move(*text) : unreadable_module(rel, text.error());
  return {};
}

// Every .py file of the packages under `dir` (folders with an __init__.py, recursively; hidden
// folders and __pycache__ skipped), and `dir`'s own .py files when `with_top_files`.
static std::vector<fs::path> package_sources(const fs::path& dir, bool with_top_files) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_directory(ec) &&
        (name.starts_with(".") || name == "__pycache__" || !fs::exists(p / "__init__.py", ec))) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && p.extension() == ".py" && (with_top_files || p.parent_path() != dir))
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<KernelFiles> load_kernel_files(const std::string& path) {
  std::error_code ec;
  fs::path main = fs::absolute(path, ec);
  if (ec || !fs::is_regular_file(main, ec))
    return fail("nkia_kernel_not_found", fmt::format("no kernel file at {}", escape_invalid_utf8(path)),
                "give the path of the .py file that defines the kernel");
  // The root: the kernel's folder, or the parent of the outermost package that contains it.
  fs::path root = main.parent_path();
  while (fs::exists(root / "__init__.py", ec) && root.has_parent_path() && root.parent_path() != root)
    root = root.parent_path();
  // Paths travel as text: a kernel whose path is not UTF-8 cannot be named to the worker.
  if (!is_utf8(main.string()))
    return fail(Diagnostic::error("nkia_not_utf8",
                                  fmt::format("the kernel's path is not UTF-8: {}", escape_invalid_utf8(main.string())),
                                  "rename the file, or the folders above it, with UTF-8 names")
                    .at(SourceLoc{escape_invalid_utf8(main.string()), 0, 0}));

  KernelFiles kf;
  kf.root = root.string();
  kf.main_path = fs::relative(main, root, ec).generic_string();
  int64_t total = 0;
  auto add = [&](const fs::path& p) -> Result<void> {
    return add_source(kf, p, fs::relative(p, root, ec).generic_string(), kf.root, total);
  };
  const bool in_package = root != main.parent_path();
  if (in_package) {
    for (const fs::path& p : package_sources(root, true))
      if (auto r = add(p); !r) return fail(r.error());
  } else {
    for (const auto& e : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec))
      if (e.is_regular_file(ec) && e.path().extension() == ".py")
        if (auto r = add(e.path()); !r) return fail(r.error());
  }
  if (!kf.files.count(kf.main_path))
    if (auto r = add(main); !r) return fail(r.error());
  return kf;
}

Result<void> add_kernel_library(KernelFiles& kf, const std::string& lib_dir) {
  std::error_code ec;
  fs::path dir = fs::absolute(lib_dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return fail("nkia_kernel_not_found", fmt::format("no kernel library folder at {}", escape_invalid_utf8(lib_dir)),
                "give a folder that holds Python packages");
  if (!is_utf8(dir.string()))
    return fail("nkia_not_utf8", fmt::format("the library's path is not UTF-8: {}", escape_invalid_utf8(dir.string())),
                "rename the folder, or the folders above it, with UTF-8 names");
  int64_t total = 0;
  for (const auto& [rel, src] : kf.files) total += static_cast<int64_t>(src.size());
  for (const fs::path& p : package_sources(dir, false)) {
    std::string rel = fs::relative(p, dir, ec).generic_string();
    if (kf.files.count(rel)) continue;
    if (auto r = add_source(kf, p, rel, dir.string(), total); !r) return fail(r.error());
    if (kf.files.count(rel)) kf.roots[rel] = dir.string();
  }
  return {};
}

std::string kernel_files_digest(const KernelFiles& f) {
  std::string d = f.main_path + '\0';
  for (const auto& [path, src] : f.files) d += path + '\0' + src + '\0';
  return d;
}

std::string KernelFiles::real_path(const std::string& rel) const {
  auto it = roots.find(rel);
  const std::string& base = it != roots.end() ? it->second : root;
  return base.empty() ? rel : (fs::path(base) / rel).string();
}

KernelFiles kernel_files_from_source(std::string source, std::string name) {
  KernelFiles kf;
  kf.main_path = name;
  kf.files[name] = std::move(source);
  return kf;
}

void make_timing_only(KernelCall& call, std::vector<TensorSpec> shapes) {
  call.compute = false;
  call.collect_trace = true;
  call.want_outputs = false;
  for (TensorSpec& spec : shapes) {
    call.input_names.push_back(spec.name);
    call.zero_inputs.push_back(std::move(spec));
  }
}

bool OutputStores::unstored_at(int64_t i) const {
  auto it = std::upper_bound(unstored.begin(), unstored.end(), i,
                             [](int64_t v, const std::pair<int64_t, int64_t>& r) { return v < r.first; });
  if (it == unstored.begin()) return false;
  --it;
  return i < it->first + it->second;
}

namespace {

nlohmann::json stores_to_json(const std::vector<OutputStores>& stores) {
  nlohmann::json a = nlohmann::json::array();
  for (const OutputStores& s : stores)
    a.push_back({{"known", s.known}, {"unstored", s.unstored}, {"truncated", s.truncated}});
  return a;
}

// Each output's runs: sorted, disjoint, inside the output, at most kMaxUnstoredRuns.
Result<std::vector<OutputStores>> stores_from_json(const nlohmann::json& header, const std::vector<TensorSpec>& specs) {
  std::vector<OutputStores> out;
  auto it = header.find("output_stores");
  if (it == header.end()) return out;  // not known for any output
  if (!it->is_array() || (!it->empty() && it->size() != specs.size()))
    return fail(bad_wire("'output_stores' is missing or does not match the outputs"));
  for (size_t k = 0; k < it->size(); ++k) {
    const nlohmann::json& j = (*it)[k];
    OutputStores s;
    if (!j.is_object() || !get_to(j, "known", s.known) || !get_to(j, "unstored", s.unstored) ||
        !get_to(j, "truncated", s.truncated) || s.unstored.size() > kMaxUnstoredRuns)
      return fail(bad_wire("a malformed 'output_stores' entry"));
    const int64_t n = shape_numel(specs[k].shape);  // specs_from_json refused counts that overflow
    int64_t end = 0;
    for (const auto& [start, len] : s.unstored) {
      if (start < end || len <= 0 || start > n - len) return fail(bad_wire("'output_stores' runs out of order"));
      end = start + len;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Result<Attachments> share_large_inputs(KernelCall& call, int64_t min_bytes) {
  Attachments shared;
  auto known = [&](const Tensor& t) {
    auto* m = dynamic_cast<SharedMemory*>(t.storage()->external().get());
    if (m == nullptr || !m->sealed() || m->fd() < 0 || !t.is_contiguous()) return false;
    if (attachment_index(t, shared) < 0)
      shared.push_back(std::static_pointer_cast<SharedMemory>(t.storage()->external()));
    return true;
  };
  std::vector<size_t> to_copy;
  int64_t total = 0;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (!t.defined() || known(t) || t.nbytes() < min_bytes) continue;
    to_copy.push_back(i);
    total += (t.nbytes() + 63) / 64 * 64;
  }
  if (shared.size() + (to_copy.empty() ? 0 : 1) > kMaxAttachmentsPerCall)
    return fail(Diagnostic::error(std::string(kSharedMemoryError),
                                  fmt::format("the inputs live in {} shared buffers; a call carries at most {}",
                                              shared.size() + 1, kMaxAttachmentsPerCall),
                                  "keep a call's inputs in fewer shared buffers"));
  if (to_copy.empty()) return shared;
  auto mem = SharedMemory::create(total);
  if (!mem) return fail(mem.error());
  int64_t at = 0;
  std::vector<std::pair<size_t, int64_t>> placed;
  for (size_t i : to_copy) {
    const Tensor& t = call.inputs[i];
    if (t.is_contiguous()) {
      if (auto ok = (*mem)->write(at, t.data(), t.nbytes()); !ok) return fail(ok.error());
    } else {
      auto storage = std::make_shared<Storage>(*mem, at, t.nbytes());
      Tensor dst(storage, t.dtype(), t.shape(), contiguous_strides(t.shape()), 0);
      dst.assign(t);
    }
    placed.emplace_back(i, at);
    at += (t.nbytes() + 63) / 64 * 64;
  }
  if (auto ok = (*mem)->seal(); !ok) return fail(ok.error());
  for (auto [i, offset] : placed) {
    const Tensor& t = call.inputs[i];
    auto storage = std::make_shared<Storage>(*mem, offset, t.nbytes());
    call.inputs[i] = Tensor(std::move(storage), t.dtype(), t.shape(), contiguous_strides(t.shape()), 0);
  }
  shared.push_back(std::move(*mem));
  return shared;
}

std::string encode_call(const KernelCall& c, const Attachments& shared) {
  nlohmann::json h = {{"root", c.src.root},
                      {"main_path", c.src.main_path},
                      {"files", c.src.files},
                      {"roots", c.src.roots},
                      {"entry", c.entry},
                      {"kwargs", c.kwargs},
                      {"grid", c.grid},
                      {"input_names", c.input_names},
                      {"target", c.target},
                      {"compute", c.compute},
                      {"collect_trace", c.collect_trace},
                      {"eager_state", c.eager_state},
                      {"kernel_only", c.kernel_only},
                      {"zero_inputs", specs_to_json(c.zero_inputs)},
                      {"want_outputs", c.want_outputs},
                      {"runs", c.runs}};
  return pack(h, c.inputs, "inputs", nullptr, {}, shared);
}

Result<KernelCall> decode_call(std::string_view bytes, const Attachments& shared) {
  auto u = unpack(bytes, "inputs", shared);
  if (!u) return fail(u.error());
  KernelCall c;
  if (!get_to(u->header, "root", c.src.root) || !get_to(u->header, "main_path", c.src.main_path) ||
      !get_to(u->header, "files", c.src.files) || !get_to(u->header, "roots", c.src.roots) ||
      !get_to(u->header, "entry", c.entry) || !get_to(u->header, "kwargs", c.kwargs) ||
      !get_to(u->header, "grid", c.grid) || !get_to(u->header, "input_names", c.input_names) ||
      !get_to(u->header, "target", c.target) || !get_to(u->header, "compute", c.compute) ||
      !get_to(u->header, "collect_trace", c.collect_trace) || !get_to(u->header, "eager_state", c.eager_state) ||
      !get_to(u->header, "kernel_only", c.kernel_only))
    return fail(bad_wire("a call field is missing or has the wrong type"));
  if (!c.target.empty() && !target_by_name(c.target)) return fail(bad_wire("an unknown target"));
  if (!get_to(u->header, "want_outputs", c.want_outputs) || !get_to(u->header, "runs", c.runs) ||
      !u->header.contains("zero_inputs"))
    return fail(bad_wire("a call field is missing or has the wrong type"));
  auto zeros = specs_from_json(u->header["zero_inputs"], kMaxSpecElements, "zero_inputs");
  if (!zeros) return fail(zeros.error());
  c.zero_inputs = std::move(*zeros);
  c.inputs = std::move(u->arrays);
  if (c.runs < 1 || c.runs > kMaxRunsPerCall || c.inputs.size() % static_cast<size_t>(c.runs) != 0 ||
      (c.runs > 1 && !c.zero_inputs.empty()))
    return fail(bad_wire("a call's runs do not divide its inputs"));
  if (!c.input_names.empty() && c.input_names.size() != c.inputs.size() / c.runs + c.zero_inputs.size())
    return fail(bad_wire("input_names and inputs differ in length"));
  return c;
}

KernelCall call_of_run(const KernelCall& call, int i) {
  NKIA_ASSERT(call.runs >= 1 && i >= 0 && i < call.runs && call.inputs.size() % static_cast<size_t>(call.runs) == 0);
  const size_t per = call.inputs.size() / static_cast<size_t>(call.runs);
  KernelCall one = call;  // every option as the call has it; only the inputs are one run's
  one.runs = 1;
  one.inputs.assign(call.inputs.begin() + static_cast<std::ptrdiff_t>(per * static_cast<size_t>(i)),
                    call.inputs.begin() + static_cast<std::ptrdiff_t>(per * static_cast<size_t>(i + 1)));
  return one;
}

namespace {

// encode_outcome, appended to `out` (a std::string or a Reply).
template <class Out>
void encode_outcome_into(Out& out, const Result<KernelOutcome>& r) {
  if (!r) return pack_into(out, {{"diagnostic", r.error().to_json()}}, {}, "outputs");
  auto [trace_header, trace_bytes] = encode_trace(r->trace);
  nlohmann::json warnings = nlohmann::json::array();
  for (size_t i = 0; i < r->warnings.size() && i < kMaxWarnings; ++i) warnings.push_back(r->warnings[i].to_json());
  nlohmann::json header = {{"printed", r->printed},
                           {"trace", std::move(trace_header)},
                           {"output_specs", specs_to_json(r->output_specs)},
                           {"output_stores", stores_to_json(r->output_stores)},
                           {"warnings", std::move(warnings)}};
  pack_into(out, header, r->outputs, "outputs", "trace", trace_bytes);
}

}  // namespace

std::string encode_outcome(const Result<KernelOutcome>& r) {
  std::string out;
  encode_outcome_into(out, r);
  return out;
}

Reply encode_outcome_reply(const Result<KernelOutcome>& r) {
  Reply out;
  encode_outcome_into(out, r);
  return out;
}

Result<KernelOutcome> decode_outcome(std::string_view bytes, const std::shared_ptr<ExternalMemory>& memory) {
  if (memory && (bytes.data() < reinterpret_cast<const char*>(memory->bytes()) ||
                 bytes.data() + bytes.size() > reinterpret_cast<const char*>(memory->bytes()) + memory->byte_size()))
    throw InternalError("decode_outcome: the bytes do not lie in their memory");
  auto u = unpack(bytes, "outputs", {}, memory);
  if (!u) return fail(u.error());
  if (auto it = u->header.find("diagnostic"); it != u->header.end()) {
    Diagnostic d = Diagnostic::from_json(*it);
    if (d.code.empty()) return fail(bad_wire("a diagnostic without a code"));
    return fail(std::move(d));
  }
  KernelOutcome o;
  if (!get_to(u->header, "printed", o.printed)) return fail(bad_wire("no 'printed' text"));
  auto it = u->header.find("trace");
  if (it == u->header.end()) return fail(bad_wire("no 'trace'"));
  auto trace = decode_trace(*it, u->blobs);
  if (!trace) return fail(trace.error());
  o.trace = std::move(*trace);
  if (!u->header.contains("output_specs")) return fail(bad_wire("no 'output_specs'"));
  auto specs = specs_from_json(u->header["output_specs"], kMaxI64, "output_specs");
  if (!specs) return fail(specs.error());
  o.output_specs = std::move(*specs);
  auto w = u->header.find("warnings");
  if (w == u->header.end() || !w->is_array()) return fail(bad_wire("no 'warnings' array"));
  if (w->size() > kMaxWarnings) return fail(bad_wire("more warnings than the cap"));
  for (const auto& j : *w) {
    Diagnostic d = Diagnostic::from_json(j);
    if (d.code.empty() || d.severity == Severity::kError)
      return fail(bad_wire("a warning without a code, or an error"));
    o.warnings.push_back(std::move(d));
  }
  auto stores = stores_from_json(u->header, o.output_specs);
  if (!stores) return fail(stores.error());
  o.output_stores = std::move(*stores);
  o.outputs = std::move(u->arrays);
  if (!o.outputs.empty()) {
    bool agree = o.outputs.size() == o.output_specs.size();
    for (size_t i = 0; agree && i < o.outputs.size(); ++i)
      agree = o.outputs[i].dtype() == o.output_specs[i].dtype && o.outputs[i].shape() == o.output_specs[i].shape;
    if (!agree) return fail(bad_wire("outputs and their specs disagree"));
  }
  return o;
}

void append_run_outcome(Reply& reply, const Result<KernelOutcome>& outcome) {
  // Its length first, written once the outcome is encoded after it: its arrays are spans of the
  // outputs' storage (runtime/reply.h), so nothing is copied or regrown run by run.
  const size_t at = reply.size();
  reply.append(std::string(8, '\0'));
  encode_outcome_into(reply, outcome);
  reply.set_u64(at, reply.size() - at - 8);
}

Result<std::vector<Result<KernelOutcome>>> decode_run_outcomes(std::string_view bytes, int runs,
                                                               const std::shared_ptr<ExternalMemory>& memory) {
  std::vector<Result<KernelOutcome>> out;
  while (!bytes.empty()) {
    if (bytes.size() < 8) return fail(bad_wire("a run's outcome shorter than its length prefix"));
    const uint64_t n = get_u64(bytes);
    if (n > bytes.size() - 8) return fail(bad_wire("a run's outcome beyond the message"));
    if (static_cast<int64_t>(out.size()) >= runs) return fail(bad_wire("more outcomes than runs"));
    if (!out.empty() && !out.back()) return fail(bad_wire("an outcome after a failed run"));
    out.push_back(decode_outcome(bytes.substr(8, n), memory));
    bytes.remove_prefix(8 + n);
  }
  if (out.empty()) return fail(bad_wire("no outcome of any run"));
  return out;
}

}  // namespace nki_agent
