// `nki-agent run`: execute a kernel (or a host function that launches kernels) on given or
// generated inputs, in a sandboxed worker, and write its outputs as .npy files (and, with --trace,
// the executed instructions as JSON).
#include <fmt/format.h>

#include <filesystem>

#include "cli/cli.h"
#include "nki/target.h"
#include "nki/trace.h"
#include "runtime/kernel_service.h"
#include "tensor/npy.h"
#include "tensor/rng.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::cli {

namespace {

struct RunOptions {
  KernelFlags k;
  std::vector<std::string> inputs;   // .npy paths; the file stem names the argument
  std::vector<std::string> randoms;  // name=dtype[shape]
  std::vector<std::string> dtypes;   // name=dtype casts of inputs
  std::string out = "out";
  std::string trace;  // a file for the trace's JSON; empty: none
  uint64_t seed = 0;
  bool raw_bits = false;
};

Result<KernelCall> build_call(const RunOptions& o) {
  auto made = kernel_call_from_options(o.k);
  if (!made) return fail(made.error());
  KernelCall& call = *made;
  call.collect_trace = !o.trace.empty();
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
  return made;
}

int run_run(const Context& ctx, const RunOptions& o) {
  auto call = build_call(o);
  if (!call) return report(ctx, call.error());
  KernelServiceOptions so;
  so.workers = 1;
  auto service = KernelService::create(so);
  if (!service) return report(ctx, service.error());
  auto outcome = (*service)->run(*call, o.k.limits(/*large_reply=*/call->collect_trace));
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
  print_warnings(ctx, outcome->warnings);
  nlohmann::json result = {
      {"outputs", outs}, {"printed", outcome->printed}, {"warnings", warnings_json(outcome->warnings)}};
  if (!o.trace.empty()) {
    nlohmann::json about = {
        {"kernel", o.k.kernel}, {"entry", o.k.entry}, {"target", target_trn1().name}, {"timing_only", false}};
    if (auto w = write_trace_file(o.trace, about, outcome->trace); !w) return report(ctx, w.error());
    result["trace_file"] = o.trace;
    result["trace_summary"] = summary_to_json(summarize(outcome->trace));
    if (!ctx.json) fmt::print("{}: trace of {} instructions\n", o.trace, outcome->trace.size());
  }
  if (!ctx.json && !outcome->printed.empty()) fmt::print(stderr, "kernel printed:\n{}", outcome->printed);
  if (!ctx.json && outcome->outputs.empty()) fmt::print("the kernel returned no outputs\n");
  emit_json(ctx, result);
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "Run a kernel in the sandbox on .npy or generated inputs; write its outputs");
  add_kernel_options(*sub, o->k);
  sub->add_option("--input,-i", o->inputs, "An input array (.npy); its file name names the argument");
  sub->add_option("--random,-r", o->randoms, "A generated input, name=dtype[shape] (standard normal)");
  sub->add_option("--dtype", o->dtypes, "Cast an input, name=dtype (NumPy has no bfloat16 or fp8)");
  sub->add_option("--out,-o", o->out, "Output folder (out0.npy, out1.npy, ...)")->capture_default_str();
  sub->add_option("--seed", o->seed, "Seed for --random inputs")->capture_default_str();
  sub->add_option("--trace", o->trace, "Write the executed instructions as JSON to this file");
  sub->add_flag("--raw-bits", o->raw_bits, "Write bfloat16/fp8 outputs as tagged raw bits instead of float32 values");
  add_limit_options(*sub, o->k);
  sub->callback([&ctx, o] { ctx.exit_code = run_run(ctx, *o); });
}

}  // namespace nki_agent::cli
