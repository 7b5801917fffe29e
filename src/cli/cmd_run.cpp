// `nki-agent run`: execute a kernel (or a host function that launches kernels) on given or
// generated inputs, in a sandboxed worker, and write its outputs as .npy files.
#include <fmt/format.h>

#include <filesystem>

#include "cli/cli.h"
#include "runtime/kernel_service.h"
#include "tensor/npy.h"
#include "tensor/rng.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::cli {

namespace {

struct RunOptions {
  std::string kernel;
  std::string entry;
  std::vector<std::string> inputs;  // .npy paths; the file stem names the argument
  std::vector<std::string> randoms;  // name=dtype[shape]
  std::vector<std::string> args;     // k=v, v a Python literal
  std::vector<std::string> dtypes;   // name=dtype casts of inputs
  std::string grid;
  std::string out = "out";
  uint64_t seed = 0;
  bool raw_bits = false;
  double timeout = kDefaultKernelSeconds;
  int64_t memory_mib = kDefaultKernelMemoryMiB;
};

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

Result<KernelCall> build_call(const RunOptions& o) {
  auto files = load_kernel_files(o.kernel);
  if (!files) return fail(files.error());
  KernelCall call;
  call.src = std::move(*files);
  call.entry = o.entry;
  auto grid = parse_grid(o.grid);
  if (!grid) return fail(grid.error());
  call.grid = *grid;
  for (const auto& a : o.args) {
    auto kv = split_pair(a, "--arg");
    if (!kv) return fail(kv.error());
    call.kwargs[kv->first] = kv->second;
  }
  for (const auto& path : o.inputs) {
    auto t = npy_load(path);
    if (!t) return fail(t.error());
    call.inputs.push_back(std::move(*t));
    call.input_names.push_back(std::filesystem::path(path).stem().string());
  }
  for (const auto& text : o.randoms) {
    auto spec = parse_tensor_spec(text);
    if (!spec) return fail(spec.error());
    Rng rng(o.seed, Rng::stream_id(spec->name));
    call.inputs.push_back(random_normal(spec->shape, spec->dtype, rng));
    call.input_names.push_back(spec->name);
  }
  for (const auto& d : o.dtypes) {
    auto kv = split_pair(d, "--dtype");
    if (!kv) return fail(kv.error());
    auto t = dtype_from_name(kv->second);
    if (!t)
      return fail("nkia_unknown_dtype", fmt::format("unknown dtype '{}' in --dtype {}", kv->second, d),
                  "run 'nki-agent dtypes' for the list");
    bool found = false;
    for (size_t i = 0; i < call.inputs.size(); ++i)
      if (call.input_names[i] == kv->first) {
        call.inputs[i] = call.inputs[i].astype(*t);
        found = true;
      }
    if (!found)
      return fail("nkia_bad_argument", fmt::format("--dtype {}: no input named '{}'", d, kv->first),
                  "inputs are named after their .npy file (a.npy is 'a') or their --random spec");
  }
  return call;
}

int run_run(const Context& ctx, const RunOptions& o) {
  auto call = build_call(o);
  if (!call) return report(ctx, call.error());
  KernelServiceOptions so;
  so.workers = 1;
  auto service = KernelService::create(so);
  if (!service) return report(ctx, service.error());
  SandboxLimits limits;
  limits.wall_seconds = o.timeout;
  limits.cpu_seconds = o.timeout;
  limits.address_space_bytes = o.memory_mib << 20;
  auto outcome = (*service)->run(*call, limits);
  if (!outcome) return report(ctx, outcome.error());

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec)
    return report(ctx, Diagnostic::error("nkia_unwritable", fmt::format("cannot create {}: {}", o.out, ec.message())));
  nlohmann::json outs = nlohmann::json::array();
  for (size_t i = 0; i < outcome->outputs.size(); ++i) {
    const Tensor& t = outcome->outputs[i];
    std::string path = (std::filesystem::path(o.out) / fmt::format("out{}.npy", i)).string();
    auto saved = npy_save(path, t, {o.raw_bits ? NarrowAs::kRawBits : NarrowAs::kFloat32});
    if (!saved) return report(ctx, saved.error());
    outs.push_back({{"path", path}, {"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}});
    if (!ctx.json) fmt::print("{}: {}{}\n", path, dtype_name(t.dtype()), shape_str(t.shape()));
  }
  if (!ctx.json && !outcome->printed.empty()) fmt::print(stderr, "kernel printed:\n{}", outcome->printed);
  if (!ctx.json && outcome->outputs.empty()) fmt::print("the kernel returned no outputs\n");
  emit_json(ctx, {{"outputs", outs}, {"printed", outcome->printed}});
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "Run a kernel in the sandbox on .npy or generated inputs; write its outputs");
  sub->add_option("kernel", o->kernel, "The kernel's .py file (helper modules beside it are found)")->required();
  sub->add_option("--entry,-e", o->entry, "The function to call: a kernel or a host function")->required();
  sub->add_option("--input,-i", o->inputs, "An input array (.npy); its file name names the argument");
  sub->add_option("--random,-r", o->randoms, "A generated input, name=dtype[shape] (standard normal)");
  sub->add_option("--arg,-a", o->args, "A non-tensor argument, name=python-literal");
  sub->add_option("--dtype", o->dtypes, "Cast an input, name=dtype (NumPy has no bfloat16 or fp8)");
  sub->add_option("--grid", o->grid, "SPMD launch grid, e.g. 2,2");
  sub->add_option("--out,-o", o->out, "Output folder (out0.npy, out1.npy, ...)")->capture_default_str();
  sub->add_option("--seed", o->seed, "Seed for --random inputs")->capture_default_str();
  sub->add_flag("--raw-bits", o->raw_bits, "Write bfloat16/fp8 outputs as tagged raw bits instead of float32 values");
  sub->add_option("--timeout", o->timeout, "Wall-clock and CPU limit in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  sub->add_option("--memory-mib", o->memory_mib, "Address-space limit of the kernel's process")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{256}, int64_t{1} << 20));
  sub->callback([&ctx, o] { ctx.exit_code = run_run(ctx, *o); });
}

}  // namespace nki_agent::cli
