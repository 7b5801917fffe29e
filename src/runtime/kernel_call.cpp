#include "runtime/kernel_call.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "tensor/npy.h"

namespace fs = std::filesystem;

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

// ---- kernel files ------------------------------------------------------------------------------

static Result<std::string> read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return fail("nkia_kernel_unreadable", fmt::format("cannot read {}", p.string()));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result<KernelFiles> load_kernel_files(const std::string& path) {
  std::error_code ec;
  fs::path main = fs::absolute(path, ec);
  if (ec || !fs::is_regular_file(main, ec))
    return fail("nkia_kernel_not_found", fmt::format("no kernel file at {}", path),
                "give the path of the .py file that defines the kernel");
  // The root: the kernel's folder, or the parent of the outermost package that contains it.
  fs::path root = main.parent_path();
  while (fs::exists(root / "__init__.py", ec) && root.has_parent_path() && root.parent_path() != root)
    root = root.parent_path();

  KernelFiles kf;
  kf.root = root.string();
  kf.main_path = fs::relative(main, root, ec).generic_string();
  int64_t total = 0;
  auto add = [&](const fs::path& p) -> Result<void> {
    if (static_cast<int>(kf.files.size()) >= kMaxKernelFiles)
      return fail("nkia_kernel_too_large", fmt::format("more than {} Python files under {}", kMaxKernelFiles, kf.root),
                  "keep the kernel and its helper modules in a small folder of their own");
    auto text = read_text(p);
    if (!text) return fail(text.error());
    total += static_cast<int64_t>(text->size());
    if (total > kMaxKernelSourceBytes)
      return fail("nkia_kernel_too_large", fmt::format("more than {} MiB of Python under {}", kMaxKernelSourceBytes >> 20, kf.root),
                  "keep the kernel and its helper modules in a small folder of their own");
    kf.files[fs::relative(p, root, ec).generic_string()] = std::move(*text);
    return {};
  };
  const bool in_package = root != main.parent_path();
  if (in_package) {
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path& p = it->path();
      const std::string name = p.filename().string();
      if (it->is_directory(ec) && (name.starts_with(".") || name == "__pycache__" || !fs::exists(p / "__init__.py", ec))) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec) && p.extension() == ".py") {
        if (auto r = add(p); !r) return fail(r.error());
      }
    }
  } else {
    for (const auto& e : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec))
      if (e.is_regular_file(ec) && e.path().extension() == ".py")
        if (auto r = add(e.path()); !r) return fail(r.error());
  }
  if (!kf.files.count(kf.main_path))
    if (auto r = add(main); !r) return fail(r.error());
  return kf;
}

KernelFiles kernel_files_from_source(std::string source, std::string name) {
  KernelFiles kf;
  kf.main_path = name;
  kf.files[name] = std::move(source);
  return kf;
}

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
