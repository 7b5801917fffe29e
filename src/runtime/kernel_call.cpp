#include "runtime/kernel_call.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "tensor/npy.h"

namespace nki_agent {

namespace {

constexpr uint64_t kMaxHeaderBytes = 64 << 20;  // sources and names; far above any real kernel

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string pack(const nlohmann::json& header, const std::vector<Tensor>& arrays, const char* key) {
  nlohmann::json h = header;
  std::string blobs;
  h[key] = nlohmann::json::array();
  for (const Tensor& t : arrays) {
    std::vector<uint8_t> img = npy_serialize(t);
    h[key].push_back({{"offset", blobs.size()}, {"size", img.size()}});
    blobs.append(reinterpret_cast<const char*>(img.data()), img.size());
  }
  std::string text = h.dump();
  std::string out;
  out.reserve(8 + text.size() + blobs.size());
  put_u64(out, text.size());
  out += text;
  out += blobs;
  return out;
}

Diagnostic bad_wire(const std::string& why) {
  return Diagnostic::error("nkia_worker_protocol", "malformed message between host and worker: " + why,
                           "this is a bug in nki-agent, or a worker was compromised; please report it");
}

struct Unpacked {
  nlohmann::json header;
  std::vector<Tensor> arrays;
};

Result<Unpacked> unpack(std::string_view bytes, const char* key) {
  if (bytes.size() < 8) return fail(bad_wire("shorter than its length prefix"));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (n > kMaxHeaderBytes || n > bytes.size() - 8) return fail(bad_wire("header length beyond the message"));
  Unpacked u;
  u.header = nlohmann::json::parse(bytes.substr(8, n), nullptr, false);
  if (u.header.is_discarded() || !u.header.is_object()) return fail(bad_wire("header is not a JSON object"));
  std::string_view blobs = bytes.substr(8 + n);
  auto it = u.header.find(key);
  if (it == u.header.end() || !it->is_array()) return fail(bad_wire(fmt::format("no '{}' list", key)));
  for (const auto& a : *it) {
    if (!a.is_object() || !a.contains("offset") || !a.contains("size") || !a["offset"].is_number_unsigned() ||
        !a["size"].is_number_unsigned())
      return fail(bad_wire("bad array entry"));
    const uint64_t off = a["offset"], size = a["size"];
    if (off > blobs.size() || size > blobs.size() - off) return fail(bad_wire("array beyond the message"));
    auto t = npy_parse({reinterpret_cast<const uint8_t*>(blobs.data() + off), size}, "array");
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

}  // namespace

std::string encode_call(const KernelCall& c) {
  nlohmann::json h = {{"root", c.src.root},     {"main_path", c.src.main_path}, {"files", c.src.files},
                      {"entry", c.entry},       {"kwargs", c.kwargs},           {"grid", c.grid},
                      {"input_names", c.input_names}};
  return pack(h, c.inputs, "inputs");
}

Result<KernelCall> decode_call(std::string_view bytes) {
  auto u = unpack(bytes, "inputs");
  if (!u) return fail(u.error());
  KernelCall c;
  if (!get_to(u->header, "root", c.src.root) || !get_to(u->header, "main_path", c.src.main_path) ||
      !get_to(u->header, "files", c.src.files) || !get_to(u->header, "entry", c.entry) ||
      !get_to(u->header, "kwargs", c.kwargs) || !get_to(u->header, "grid", c.grid) ||
      !get_to(u->header, "input_names", c.input_names))
    return fail(bad_wire("a call field is missing or has the wrong type"));
  c.inputs = std::move(u->arrays);
  if (!c.input_names.empty() && c.input_names.size() != c.inputs.size())
    return fail(bad_wire("input_names and inputs differ in length"));
  return c;
}

std::string encode_outcome(const Result<KernelOutcome>& r) {
  if (!r) return pack({{"diagnostic", r.error().to_json()}}, {}, "outputs");
  return pack({{"printed", r->printed}}, r->outputs, "outputs");
}

Result<KernelOutcome> decode_outcome(std::string_view bytes) {
  auto u = unpack(bytes, "outputs");
  if (!u) return fail(u.error());
  if (auto it = u->header.find("diagnostic"); it != u->header.end()) {
    Diagnostic d = Diagnostic::from_json(*it);
    if (d.code.empty()) return fail(bad_wire("a diagnostic without a code"));
    return fail(std::move(d));
  }
  KernelOutcome o;
  if (!get_to(u->header, "printed", o.printed)) return fail(bad_wire("no 'printed' text"));
  o.outputs = std::move(u->arrays);
  return o;
}

}  // namespace nki_agent
