// What `nki-agent run`, `check`, `profile` and `calibrate` share: the flags that name a kernel and its
// call, the call they describe (--grid and name=value flags parsed), the inputs' shapes, and writing
// a run's trace as JSON.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "cli/cli.h"
#include "nki/target.h"
#include "nki/trace.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::cli {

std::pair<CLI::Option*, CLI::Option*> add_kernel_options(CLI::App& sub, KernelFlags& f, bool required) {
  auto* kernel = sub.add_option("kernel", f.kernel, "The kernel's .py file (helper modules beside it are found)");
  auto* entry = sub.add_option("--entry,-e", f.entry, "The function to call: a kernel or a host function");
  if (required) {
    kernel->required();
    entry->required();
  }
  sub.add_option("--lib", f.libs,
                 "A folder of Python packages the kernel may import (e.g. tasks/nkibench/lib for a Level-2 baseline)");
  sub.add_option("--arg,-a", f.args, "A non-tensor argument, name=python-literal");
  sub.add_option("--grid", f.grid, "SPMD launch grid, e.g. 2,2");
  return {kernel, entry};
}

void add_limit_options(CLI::App& sub, KernelFlags& f) {
  sub.add_option("--timeout", f.timeout, "Wall-clock and CPU limit of the kernel run, in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  sub.add_option("--memory-mib", f.memory_mib, "Address-space limit of the kernel's process")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{256}, int64_t{1} << 20));
}

Result<KernelCall> kernel_call_from_options(const KernelFlags& f) {
  auto files = load_kernel_files(f.kernel);
  if (!files) return fail(files.error());
  for (const auto& lib : f.libs)
    if (auto r = add_kernel_library(*files, lib); !r) return fail(r.error());
  KernelCall call;
  call.src = std::move(*files);
  call.entry = f.entry;
  if (!f.target.empty()) {
    if (auto t = target_by_name(f.target); !t) return fail(t.error());
    call.target = f.target;
  }
  auto grid = parse_grid(f.grid);
  if (!grid) return fail(grid.error());
  call.grid = *grid;
  for (const auto& a : f.args) {
    auto kv = split_pair(a, "--arg");
    if (!kv) return fail(kv.error());
    call.kwargs[kv->first] = kv->second;
  }
  return call;
}

Result<std::vector<TensorSpec>> parse_input_shapes(const std::vector<std::string>& shapes, int64_t& elements) {
  std::vector<TensorSpec> specs;
  elements = 0;
  for (const auto& text : shapes) {
    auto spec = parse_tensor_spec(text);
    if (!spec) return fail(spec.error());
    int64_t n = 1;
    for (int64_t d : spec->shape) {
      if (d < 0 || (d > 0 && n > (int64_t{1} << 50) / d))
        return fail("nkia_bad_spec", fmt::format("input '{}' is absurdly large: {}", spec->name, text),
                    "profile with shapes a NeuronCore's HBM could hold");
      n *= d;
    }
    elements += n;
    specs.push_back(std::move(*spec));
  }
  return specs;
}

Result<std::vector<int64_t>> parse_grid(const std::string& text) {
  std::vector<int64_t> grid;
  if (text.empty()) return grid;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string tok = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end != '\0' || v < 1 || v > 65536)
      return fail("nkia_bad_grid", fmt::format("bad --grid '{}': '{}' is not a grid size", text, tok),
                  "give positive sizes separated by commas, e.g. --grid 2,2");
    grid.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return grid;
}

Result<std::pair<std::string, std::string>> split_pair(const std::string& text, const char* flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return fail("nkia_bad_argument", fmt::format("bad {} '{}': expected name=value", flag, text),
                fmt::format("write {} name=value", flag));
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

nlohmann::json trace_document(const nlohmann::json& about, const Trace& trace) {
  nlohmann::json doc = about;
  doc["summary"] = summary_to_json(summarize(trace));
  doc["trace"] = trace.to_json();
  return doc;
}

Result<void> write_trace_file(const std::string& path, const nlohmann::json& about, const Trace& trace) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return fail("nkia_unwritable", fmt::format("cannot write the trace to {}", path), "check the folder exists");
  // The run's facts and summary first, then one record per line: large traces stay greppable.
  nlohmann::json head = about;
  head["summary"] = summary_to_json(summarize(trace));
  // A kernel path that is not UTF-8 is written with U+FFFD rather than failing the trace.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  std::string text = head.dump(-1, ' ', false, kReplace);
  text.pop_back();  // the closing brace
  f << text << ",\"trace\":[";
  const nlohmann::json records = trace.to_json();
  for (size_t i = 0; i < records.size(); ++i) f << (i ? ",\n" : "\n") << records[i].dump(-1, ' ', false, kReplace);
  f << "\n]}\n";
  f.close();
  if (!f) return fail("nkia_unwritable", fmt::format("cannot write the trace to {}", path), "check the disk has room");
  return {};
}

}  // namespace nki_agent::cli
